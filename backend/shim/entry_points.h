/*
 * The driver entry points the stream path needs to see (entry_points.c; stream_path.h).
 *
 * A CUDA program reaches the driver through function pointers: the CUDA runtime asks cuGetProcAddress for
 * each of them, other code asks dlsym. With the stream path on, the shim hands out its own functions for
 * stream creation and destruction, for the kernel launches it can confine through a stream's mask, and for
 * everything that launches kernels it cannot (graphs, captures, old launch calls): those subscribe the
 * driver's launch callback before they go on. Off, every pointer is the driver's own.
 */
#ifndef GPUPART_ENTRY_POINTS_H
#define GPUPART_ENTRY_POINTS_H

/* What to hand out for the driver function `name` that the lookup found at `real`: `real` itself, or the
 * shim's function in front of it. The dlsym interposer and the cuGetProcAddress wrappers call this. */
void* gpupart_entry_point(const char* name, void* real);

#endif /* GPUPART_ENTRY_POINTS_H */
