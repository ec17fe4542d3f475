/*
 * What the shim's main file (gpupart_shim.c) offers the library's other parts: the process's slot, setting
 * the shim up on demand (an API call in a program that was not started by `gpupart run`), and which copy of
 * the library serves the process (docs/registry-layout-5.md, decision 1).
 */
#ifndef GPUPART_SHIM_CORE_H
#define GPUPART_SHIM_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "registry_layout.h"

/* The process's slot: the registry's, or a private copy when the registry is unusable or after a fork. */
struct gpupart_slot_file* gpupart_shim_slot(void);

/* Makes sure the shim is set up: loads libcuda.so.1 if the process has not (a program using the API is a
 * CUDA program), registers the process and subscribes to launches, once; waits for another thread doing
 * it. 0, or an errno value with one line in `why`. */
int gpupart_shim_setup_for_api(char* why, size_t why_size);

/* Sets the shim up once libcuda is in the process (`at_start`: it was linked in, so its calls reach the
 * driver past the shim's entry points and only the callback sees them); waits for no one. */
void gpupart_shim_setup_once(void* libcuda, int at_start);
/* 0 not set up, 1 being set up, 2 done. */
int gpupart_shim_setup_state(void);
/* Subscribes the launch callback now and publishes `launch_path` (enum gpupart_launch_path). */
void gpupart_shim_subscribe(void* libcuda, uint32_t launch_path);

/* Subscribes the driver's launch callback if the stream path put it off (stream_path.h), once, waiting for
 * another thread doing it; nothing when it is subscribed or cannot be. Before a launch the stream path does
 * not confine. */
void gpupart_shim_ensure_callback(void);

/* The stream path's view of the operator's mask on status entry `gpu`, as the calling thread's launches
 * would apply it (refreshed from the control block when it changed; status published as for a launch of
 * descriptor `version`). Fills *seen_seq with the control sequence it reflects. 1, or 0 for no such GPU. */
struct gpupart_bound;
int gpupart_shim_stream_bound(int gpu, uint32_t version, uint32_t* seen_seq, struct gpupart_bound* bound);

/* 1 in the preloaded shim, whose dlsym is in front of the C library's (dlsym_interpose.c); 0 in libgpupart.so. */
int gpupart_dlsym_interposed(void);

/* dlsym(RTLD_NEXT, name) as the shim itself means it: the next definition after this library. Through the
 * shim's own dlsym the shim's lookups would go round in a circle. */
void* gpupart_next_symbol(const char* name);

/* Nonzero when the driver accepted the launch callback: masks reach descriptors. */
int gpupart_shim_launch_callback_ok(void);

/* Nonzero when this copy of the library serves the process: the copy the dynamic linker resolves
 * gpupart_last_error to (the preloaded shim when both are loaded). The other copy stays inert. */
int gpupart_shim_is_active_copy(void);

#endif /* GPUPART_SHIM_CORE_H */
