/*
 * How the CUDA driver library comes into the process and when the shim subscribes its launch callback
 * (shim_libcuda.c). The shim sets itself up when libcuda arrives: by the program's or the runtime's
 * dlopen, as a dependency of a library it dlopens, or linked into the program from the start. With the
 * stream path on (stream_path.h) the callback is put off until a launch needs it, or until a library that
 * calls libcuda directly, past the shim's entry points, is loaded.
 */
#ifndef GPUPART_SHIM_LIBCUDA_H
#define GPUPART_SHIM_LIBCUDA_H

#include <stdint.h>

/* The C library's dlopen (or the next interposer's), past the shim's own. */
void* gpupart_real_dlopen(const char* file, int flags);

/* libcuda if the process has it loaded (a reference: dlclose it), else NULL. */
void* gpupart_libcuda_if_loaded(void);

/* Setup: subscribe the callback now (the launch path is the callback's). */
void gpupart_libcuda_subscribe_now(void* libcuda);

/* Setup: the stream path confines launches; gpupart_shim_ensure_callback subscribes when one needs it. */
void gpupart_libcuda_defer(void* libcuda);

/* Whether this copy of the library serves the process (the preloaded shim when libgpupart.so is loaded too). */
int gpupart_find_active_copy(void);

#endif /* GPUPART_SHIM_LIBCUDA_H */
