/*
 * Two libraries for shim_rtld_next (rtld_next_host.c), built from this one file: with GPUPART_RTLD_NEXT_FIRST
 * it defines gpupart_test_value() = 1 and gpupart_test_next_value(), which returns what the NEXT definition
 * of gpupart_test_value returns, as a library that wraps a function finds the one it wraps; without, it
 * defines gpupart_test_value() = 2 only. Preloaded after the shim in that order, the next definition after
 * the first library is the second's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

#ifdef GPUPART_RTLD_NEXT_FIRST
EXPORT int gpupart_test_value(void) { return 1; }

EXPORT int gpupart_test_next_value(void) {
    void* found = dlsym(RTLD_NEXT, "gpupart_test_value");
    int (*next)(void) = NULL;
    memcpy(&next, &found, sizeof next);
    return next != NULL ? next() : -1;
}

/* A name nobody defines: NULL, and dlerror() says why. 1 when both hold. */
EXPORT int gpupart_test_missing_is_an_error(void) {
    dlerror();
    return dlsym(RTLD_NEXT, "gpupart_test_no_such_symbol") == NULL && dlerror() != NULL;
}
#else
EXPORT int gpupart_test_value(void) { return 2; }
#endif
