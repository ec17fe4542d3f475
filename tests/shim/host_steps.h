/*
 * What the stand-in CUDA programs of tests/shim (shim_host.c, smctrl_host.c) share for their step lists:
 * matching a step's name, and waiting for the file a test script creates to let a step go on.
 */
#ifndef GPUPART_HOST_STEPS_H
#define GPUPART_HOST_STEPS_H

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline int starts_with(const char* text, const char* prefix) { return strncmp(text, prefix, strlen(prefix)) == 0; }

/* 0 once `path` exists, -1 after 20 s without it ($HOST_WAIT_SECONDS, 1-600, for tests whose programs must
 * outlive several scheduler rounds: a bound either way, so a test that fails never leaves them running). */
static inline int wait_for(const char* path) {
    const struct timespec tick = {0, 10 * 1000 * 1000};
    const char* text = getenv("HOST_WAIT_SECONDS");
    const long seconds = text != NULL && atol(text) > 0 && atol(text) <= 600 ? atol(text) : 20;
    for (long i = 0; i < seconds * 100; ++i) {
        if (access(path, F_OK) == 0) return 0;
        nanosleep(&tick, NULL);
    }
    return -1;
}

#endif /* GPUPART_HOST_STEPS_H */
