/*
 * The shim's CUDA-graph follower (gpupart_shim_graphs.c), as seen by the shim's main file.
 *
 * A graph exec keeps the TPC mask that was in force when its kernel descriptors were built (its upload),
 * so a mask change would not reach it. The follower watches the process's graph calls through the same
 * driver callback subscription as the launch descriptors (driver-API domain) and remembers each exec's
 * kernel nodes. After a mask change its re-mask thread (graph_remasker.c) toggles those nodes off and on
 * and uploads each exec, so the driver rebuilds their descriptors, with the launch callback writing the
 * new mask, before the application's next replay; an exec the thread has not reached is re-masked the
 * same way at its first launch. docs/cuda-graphs.md says what was measured and what is not covered.
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

/* One step of the re-mask thread: brings one stale exec up to date (GPUPART_AHEAD_ONE), finds none left
 * and publishes counters.graph_settled_generation (GPUPART_AHEAD_DONE), or cannot now (GPUPART_AHEAD_BUSY:
 * a control write in progress, or a graph call of the application's that does not leave the driver). */
enum { GPUPART_AHEAD_DONE = 0, GPUPART_AHEAD_ONE = 1, GPUPART_AHEAD_BUSY = 2 };
int gpupart_graphs_remask_ahead(struct gpupart_slot_file* slot);

/* At exit: waits out a re-mask in progress; the thread makes no driver call after this returns. */
void gpupart_graphs_stop_ahead(void);

/* In a forked child: the parent's lock may have been held by another thread at the fork. */
void gpupart_graphs_after_fork(void);

#endif /* GPUPART_SHIM_GRAPHS_H */
