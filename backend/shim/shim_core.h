/*
 * What the shim's main file (gpupart_shim.c) offers the library's other parts: the process's slot, setting
 * the shim up on demand (an API call in a program that was not started by `gpupart run`), and which copy of
 * the library serves the process (docs/registry-layout-5.md, decision 1).
 */
#ifndef GPUPART_SHIM_CORE_H
#define GPUPART_SHIM_CORE_H

#include <stddef.h>

#include "registry_layout.h"

/* The process's slot: the registry's, or a private copy when the registry is unusable or after a fork. */
struct gpupart_slot_file* gpupart_shim_slot(void);

/* Makes sure the shim is set up: loads libcuda.so.1 if the process has not (a program using the API is a
 * CUDA program), registers the process and subscribes to launches, once; waits for another thread doing
 * it. 0, or an errno value with one line in `why`. */
int gpupart_shim_setup_for_api(char* why, size_t why_size);

/* Nonzero when the driver accepted the launch callback: masks reach descriptors. */
int gpupart_shim_launch_callback_ok(void);

/* Nonzero when this copy of the library serves the process: the copy the dynamic linker resolves
 * gpupart_last_error to (the preloaded shim when both are loaded). The other copy stays inert. */
int gpupart_shim_is_active_copy(void);

#endif /* GPUPART_SHIM_CORE_H */
