/*
 * The shim's CUDA-graph follower (gpupart_shim_graphs.c), as seen by the shim's main file.
 *
 * A graph exec keeps the TPC mask that was in force when its kernel descriptors were built (its upload),
 * so a mask change would not reach it. The follower watches the process's graph calls through the same
 * driver callback subscription as the launch descriptors (driver-API domain), remembers each exec's
 * kernel nodes, and at the first launch or upload of an exec after a mask change toggles those nodes off
 * and on: the driver then rebuilds their descriptors, and the launch callback writes the new mask.
 * docs/cuda-graphs.md says what was measured and what is not covered.
 */
#ifndef GPUPART_SHIM_GRAPHS_H
#define GPUPART_SHIM_GRAPHS_H

#include <stdint.h>
#include <time.h>

#include "registry_layout.h"

#define GPUPART_DOMAIN_DRIVER_API 6 /* the driver's own numbering (not CUPTI's): measured on driver 580 */

/* CLOCK_REALTIME_COARSE is served by the vDSO: no system call. The launch counters' "last launch" stamp,
 * for kernel launches and graph replays alike. */
static inline uint64_t gpupart_coarse_realtime_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

typedef int (*gpupart_enable_fn)(uint32_t on, uint32_t handle, int domain, int cbid);

/* Resolves the driver's graph functions in `libcuda` and enables the graph-call callbacks for the
 * subscription `handle`. Publishes GPUPART_GRAPHS_FOLLOWED or, with one line on stderr, why not. */
void gpupart_graphs_setup(void* libcuda, uint32_t handle, gpupart_enable_fn enable, struct gpupart_slot_file* slot);

/* A driver-API callback (domain GPUPART_DOMAIN_DRIVER_API) of the process. */
void gpupart_graphs_on_api(struct gpupart_slot_file* slot, int cbid, const void* record);

/* In a forked child: the parent's lock may have been held by another thread at the fork. */
void gpupart_graphs_after_fork(void);

#endif /* GPUPART_SHIM_GRAPHS_H */
