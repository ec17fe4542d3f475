/*
 * shim_rtld_next: dlsym(RTLD_NEXT, ...) keeps its meaning in a process with the shim preloaded. The shim puts
 * its own dlsym in front of the C library's; the C library resolves RTLD_NEXT relative to the object that
 * called it, which would then be the shim. Run as
 *   LD_PRELOAD=libgpupart-shim.so:librtld-next-first.so:librtld-next-second.so rtld_next_host
 * it prints what it saw and exits 0 only when the first library's lookup found the second's definition (2,
 * not its own 1) and a missing name is NULL with a dlerror() message.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int call(const char* name) {
    void* found = dlsym(RTLD_DEFAULT, name);
    int (*function)(void) = NULL;
    memcpy(&function, &found, sizeof function);
    if (function == NULL) {
        printf("%s: not found (preload the two test libraries)\n", name);
        return -100;
    }
    return function();
}

int main(void) {
    const int next = call("gpupart_test_next_value");
    const int missing = call("gpupart_test_missing_is_an_error");
    printf("next definition: %d (want 2)\nmissing name is NULL with dlerror: %d (want 1)\n", next, missing);
    return next == 2 && missing == 1 ? 0 : 1;
}
