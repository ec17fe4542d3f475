/*
 * One locked change of an SMLP component file (smlp_api.c's building block): takes the component's
 * robust mutex (repairing the file when its last owner died inside), sweeps for dead processes, lets the
 * caller apply the rules (smlp/smlp_core.h), then applies Rule 3 to the threads involved, publishes
 * the change (seq, wake) and wakes the waiters. Internal: not part of the public API.
 */
#ifndef GPUPART_SMLP_SESSION_H
#define GPUPART_SMLP_SESSION_H

#include <stdint.h>

#include "smlp_layout.h"

struct gpupart_smlp {
    int fd;
    struct gpupart_smlp_file* file; /* MAP_SHARED */
    char path[512];
    int32_t pid;                    /* the process that opened it (records are named by pid + start time) */
    uint64_t start_time;
    uint64_t owned;                 /* atomic: bit i = record i was issued through this handle */
};

struct smlp_change {
    struct gpupart_smlp* smlp;
    uint32_t odd;                   /* seq while writing */
    int writing;
};

#define SMLP_SWEEP_PERIOD_NS 20000000u /* waiters look for dead processes at least this often */

/* Sets this thread's one-line message and returns `error` (positive errno). */
int smlp_fail(int error, const char* format, ...) __attribute__((format(printf, 2, 3)));

uint64_t smlp_realtime_ns(void);
uint64_t smlp_monotonic_ns(void);

/* Takes the mutex and checks the file (smlp_core validation). After a dead owner (EOWNERDEAD, or seq left
 * odd) it drops dead processes' records, repairs, and marks the mutex consistent. 0, or errno with the
 * message set (the mutex is not held then). */
int smlp_change_begin(struct gpupart_smlp* smlp, struct smlp_change* change);

/* Before the first store of a change: seq odd (once per change). */
void smlp_change_write(struct smlp_change* change);

/* Frees the records of processes that are gone (pid + start time, /proc) and applies Rules 4-5. */
void smlp_change_sweep(struct smlp_change* change);

/* Restores a record's holder thread to the policy it had before Rule 3 raised it (a no-op unless the
 * record's inheritance is APPLIED), and marks the record NONE. */
void smlp_change_restore(struct smlp_change* change, struct gpupart_smlp_request* record);

/* Rule 3, then publishes (seq even, wake + 1 if anything changed), unlocks and wakes the waiters.
 * Returns the `wake` value seen while holding the mutex: the one to wait on. */
uint32_t smlp_change_end(struct smlp_change* change);

/* Sleeps until `wake` moves from `seen` or `timeout_ns` pass. 1 if it timed out (nothing changed). */
int smlp_wait(struct gpupart_smlp* smlp, uint32_t seen, uint64_t timeout_ns);

/* Makes the component's mutex (robust, process-shared, priority-inheriting) in `memory`. 0 or errno. */
int smlp_mutex_init(void* memory);

#endif /* GPUPART_SMLP_SESSION_H */
