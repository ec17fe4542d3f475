/*
 * Which stream a kernel launch is on (launch_stream.c; docs/registry-layout-5.md decision 4).
 *
 * The launch-descriptor callback does not say which stream the kernel goes to, but the driver-API
 * callbacks of the launch functions do: at the API's first call, the library enables cuLaunchKernel(_ptsz), cuLaunchCooperativeKernel
 * (_ptsz) and cuLaunchKernelEx(_ptsz) on the subscription the shim already has (the driver takes only one),
 * keeps the launch's hStream thread-locally from the enter callback to the exit callback, and the
 * descriptor callback in between (same thread) reads it. cuStreamDestroy(_v2) drops the stream's mask, so a
 * new stream at a reused address does not inherit it. Kernels built outside such a call (graph uploads)
 * have no stream here: they get the global mask.
 */
#ifndef GPUPART_LAUNCH_STREAM_H
#define GPUPART_LAUNCH_STREAM_H

#include <stdint.h>

#include "shim_graphs.h"

/* Remembers the shim's subscription `handle` (setup). Nothing is enabled yet: a process that never calls
 * the API pays no callback per launch call. */
void gpupart_launch_stream_setup(uint32_t handle, gpupart_enable_fn enable);

/* The API's first call: enables the launch and stream-destroy callbacks, once. Says on stderr when the
 * driver refuses one (stream masks then cannot be applied; the API refuses them). */
void gpupart_launch_stream_start(void);

/* A driver-API callback: 1 when `cbid` is one of the launch or stream-destroy calls (handled here), 0 for
 * the graph follower's. Launch path: two loads and two thread-local stores per launch call. */
int gpupart_launch_stream_on_api(int cbid, const void* record);

/* Launch path: 1 inside a followed launch call (its stream in *stream), else 0. */
int gpupart_launch_stream_current(uint64_t* stream);

/* 1 once the driver accepted the callbacks and their record is the measured one; 0 before setup or when not. */
int gpupart_launch_streams_followed(void);

#endif /* GPUPART_LAUNCH_STREAM_H */
