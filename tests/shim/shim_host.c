/*
 * A stand-in CUDA application for shim_end_to_end.sh: it never links CUDA, it dlopen()s the TEST DOUBLE
 * driver (fake_libcuda.c) the way CUDA runtimes do, and "launches kernels" through fake_cuda_launch, so
 * that the real libgpupart-shim.so, preloaded, sees real dlopen calls and real launch callbacks.
 *
 *   shim_host STEP...   performed in order, one line per step on stdout (flushed):
 *     load:PATH      dlopen(PATH, RTLD_NOW), resolve fake_cuda_launch        -> "loaded"
 *     launch:VERSION one launch of a descriptor with that version byte (hex)  -> "launch version=0x40
 *                    callback=1 word0=0x... mask=0x...,0x...,0x...,0x... low=0x...,0x..." (the first u32,
 *                    the four u32 at byte 304, the two u32 at byte 84)
 *     ready:FILE     create FILE                                              -> "ready"
 *     wait:FILE      poll every 10 ms until FILE exists (exit 2 after 20 s)   -> "resumed"
 *     pid            -> "pid <pid>"
 * Exit status: 0, 1 for a bad step or a failed load, 2 when a wait gives up.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DESCRIPTOR_BYTES 512
#define V04_MASK_OFFSET 304
#define V01_MASK_OFFSET 84

typedef int (*launch_fn)(unsigned version, unsigned char* descriptor);

static uint32_t u32_at(const unsigned char* bytes, size_t offset) {
    uint32_t value;
    memcpy(&value, bytes + offset, sizeof value);
    return value;
}

static int starts_with(const char* text, const char* prefix) { return strncmp(text, prefix, strlen(prefix)) == 0; }

static int wait_for(const char* path) {
    const struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 2000; ++i) { /* 20 s */
        if (access(path, F_OK) == 0) return 0;
        nanosleep(&tick, NULL);
    }
    return -1;
}

int main(int argc, char** argv) {
    launch_fn launch = NULL;
    for (int i = 1; i < argc; ++i) {
        const char* step = argv[i];
        if (starts_with(step, "load:")) {
            void* library = dlopen(step + 5, RTLD_NOW);
            if (library == NULL) {
                fprintf(stderr, "shim_host: %s\n", dlerror());
                return 1;
            }
            void* symbol = dlsym(library, "fake_cuda_launch");
            if (symbol == NULL) {
                fprintf(stderr, "shim_host: %s has no fake_cuda_launch\n", step + 5);
                return 1;
            }
            memcpy(&launch, &symbol, sizeof launch);
            printf("loaded\n");
        } else if (starts_with(step, "launch:")) {
            char* end = NULL;
            errno = 0;
            const unsigned long version = strtoul(step + 7, &end, 16);
            if (launch == NULL || errno != 0 || end == step + 7 || *end != '\0' || version > 0xff) {
                fprintf(stderr, "shim_host: bad step %s (version is one hex byte; load: comes first)\n", step);
                return 1;
            }
            unsigned char descriptor[DESCRIPTOR_BYTES];
            const int called = launch((unsigned)version, descriptor);
            printf("launch version=0x%02lx callback=%d word0=0x%08x mask=0x%08x,0x%08x,0x%08x,0x%08x low=0x%08x,0x%08x\n",
                   version, called, u32_at(descriptor, 0), u32_at(descriptor, V04_MASK_OFFSET),
                   u32_at(descriptor, V04_MASK_OFFSET + 4), u32_at(descriptor, V04_MASK_OFFSET + 8),
                   u32_at(descriptor, V04_MASK_OFFSET + 12), u32_at(descriptor, V01_MASK_OFFSET),
                   u32_at(descriptor, V01_MASK_OFFSET + 4));
        } else if (starts_with(step, "ready:")) {
            printf("ready\n");
            fflush(stdout); /* everything up to this step is on stdout before the file appears */
            const int fd = open(step + 6, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
            if (fd < 0) {
                fprintf(stderr, "shim_host: cannot create %s: %s\n", step + 6, strerror(errno));
                return 1;
            }
            close(fd);
        } else if (starts_with(step, "wait:")) {
            if (wait_for(step + 5) != 0) {
                fprintf(stderr, "shim_host: %s did not appear within 20 s\n", step + 5);
                return 2;
            }
            printf("resumed\n");
        } else if (strcmp(step, "pid") == 0) {
            printf("pid %d\n", (int)getpid());
        } else {
            fprintf(stderr, "shim_host: unknown step %s\n", step);
            return 1;
        }
        fflush(stdout);
    }
    return 0;
}
