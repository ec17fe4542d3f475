/*
 * SMLP components (Ali et al., ECRTS 2024, section 3): the shared-memory file through which cooperating
 * processes lock and resize their GPU requests onto the TPCs of a "component". Part of registry layout 5
 * (docs/registry-layout-5.md); same directories and trust rules as slots (registry_layout.h).
 *
 * File. "<user dir>/<component>.smlp", made by the first gpupart_smlp_open() of that user (temporary
 * name, then rename), mode 0644 (0664 under a setgid root): the user's processes (and the admin group)
 * join it, everybody may read it. Component names are [A-Za-z0-9_.-]{1,63}, not starting with '.'.
 *
 * Units. The seed counts SMs; gpupart masks are TPCs, so here H (the component's size), h (the grant
 * granularity) and every L_i entry are in TPCs: L_i[k] is the request's critical-section length (any
 * unit, the same for all entries; microseconds by convention) when granted (k+1)*h TPCs.
 *
 * Queues (Ali et al., ECRTS 2024, Rules 1-5): a request record is in exactly one of PQ, FQ, SQ (its `queue`), or free.
 *  - FQ order: `ticket` (arrival in the FQ); at most `fq_length` (M) records are in the FQ (Lemma 18).
 *  - PQ order: `priority` (higher first), then `ticket`.
 *  - SQ order: `ticket` (arrival in the SQ); SQ records hold `granted` TPCs, pairwise disjoint (Lemma 13).
 *  - The free TPCs I(t) are never stored: they are `tpcs` minus the union of SQ grants, so no crash can
 *    leave them inconsistent with the grants.
 * Locking. Every change is made under `lock` (a process-shared, robust, priority-inheriting pthread
 * mutex, opaque here). A holder that dies while holding it leaves EOWNERDEAD: the next locker repairs
 * (drops records of dead processes, fixes tickets) and marks the mutex consistent. Records are written
 * field by field with `queue` last, so a record half-written by a killed process is still FREE.
 * A process that dies holding TPCs (an SQ record) or waiting (PQ/FQ) is found by pid + start time
 * (/proc) at the next change or by any waiter's periodic sweep, and its record is freed: its TPCs are
 * back in I(t) and Rules 4-5 run at once.
 * Readers that do not lock (gpupart list, top, the GUI) pread the file and retry while `seq` is odd or
 * changed (registry_seqlock.h); lockers make `seq` odd for the span of each change. `wake` is a futex
 * word: +1 after every change; waiters sleep on it (bounded, to sweep for dead holders).
 */
#ifndef GPUPART_SMLP_LAYOUT_H
#define GPUPART_SMLP_LAYOUT_H

#include <stdint.h>

#include "registry/registry_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUPART_SMLP_MAGIC "gpsmlp"    /* compared as char[8] initialised from it (zero-padded) */
#define GPUPART_SMLP_SUFFIX ".smlp"
#define GPUPART_SMLP_MAX_REQUESTS 64u  /* outstanding requests (PQ + FQ + SQ) of a component */
#define GPUPART_SMLP_MAX_LEVELS 128u   /* L_i entries: H/h <= 128 */
#define GPUPART_SMLP_NAME_BYTES 64u

enum gpupart_smlp_queue {
    GPUPART_SMLP_FREE = 0,
    GPUPART_SMLP_PQ = 1,
    GPUPART_SMLP_FQ = 2,
    GPUPART_SMLP_SQ = 3,
};

/* Rule 3 (priority inheritance), per SQ record: what was done for its holder thread. */
enum gpupart_smlp_inheritance {
    GPUPART_SMLP_INHERIT_NONE = 0,     /* not needed (no suspended job of higher priority) */
    GPUPART_SMLP_INHERIT_APPLIED = 1,  /* the holder thread runs at `inherited_priority` (SCHED_FIFO) */
    GPUPART_SMLP_INHERIT_REFUSED = 2,  /* needed, but the OS refused (EPERM: no CAP_SYS_NICE / RLIMIT_RTPRIO) */
};

struct gpupart_smlp_request {      /* 640 bytes */
    uint32_t queue;                /* enum gpupart_smlp_queue; written last */
    int32_t pid;
    uint64_t start_time;           /* field 22 of /proc/PID/stat: with pid, names the process */
    int32_t tid;                   /* the thread that issued it (Rule 3 boosts this thread) */
    int32_t priority;              /* the job's priority, higher = more urgent (JLFP) */
    uint64_t ticket;               /* order in its current queue (FQ, SQ); arrival order in the PQ */
    uint64_t issued_realtime_ns;
    uint64_t satisfied_realtime_ns; /* 0 until in the SQ */
    uint32_t granted[4];           /* SQ: the TPCs it holds (allowed bits) */
    uint32_t granted_tpcs;         /* z_i(t): their number, a multiple of h */
    uint32_t level_count;          /* entries of levels[] in use (<= H/h) */
    uint32_t tolerance_ppm;        /* z_i(t) = least k*h with L[k] <= L[|I|/h] * (1 + tolerance) */
    int32_t inherited_priority;    /* Rule 3: the priority its holder runs at now (0: none; REFUSED: the one refused) */
    uint32_t inheritance;          /* enum gpupart_smlp_inheritance */
    int32_t saved_policy;          /* the holder thread's policy/priority before inheritance, restored at unlock */
    int32_t saved_priority;
    char label[32];                /* the caller's name for the request (shown by front ends), NUL-terminated */
    uint8_t reserved[128 - 124];
    uint32_t levels[GPUPART_SMLP_MAX_LEVELS]; /* L_i: levels[k] = length when granted (k+1)*h TPCs */
};

/* component.flags: its TPC masks (tpcs, gpc_tpcs, every grant) are TPC numbers, libsmctrl's numbering (TPC k =
 * SMs 2k and 2k+1), as programs give and use them through libgpupart's API; a component without it was made
 * by a library before the numbering, and its masks are launch-descriptor bits. */
#define GPUPART_SMLP_NUMBERED 0x1u

struct gpupart_smlp_component {    /* 1024 bytes, then the records */
    char magic[8];                 /* GPUPART_SMLP_MAGIC */
    uint32_t layout_version;       /* GPUPART_REGISTRY_LAYOUT_VERSION */
    uint32_t file_size;            /* sizeof(struct gpupart_smlp_file) */
    uint32_t state;                /* enum gpupart_slot_state: LIVE once formed */
    uint32_t owner_uid;
    struct gpupart_gpu_uuid gpu;   /* the GPU the component's TPCs are on (all zero: not said) */
    uint32_t tpcs[4];              /* the component's TPCs, L (allowed bits); H = their number */
    uint32_t h;                    /* grant granularity in TPCs (divides H) */
    uint32_t fq_length;            /* M */
    uint32_t seq;                  /* odd while a locker changes the file */
    uint32_t wake;                 /* futex word: +1 after every change */
    uint64_t next_ticket;
    uint64_t created_realtime_ns;
    /* statistics, changed under the lock */
    uint64_t satisfied;            /* requests that entered the SQ */
    uint64_t finalized;            /* requests unlocked by their holder */
    uint64_t reclaimed;            /* records of dead processes freed (their TPCs returned) */
    uint64_t inheritance_applied;
    uint64_t inheritance_refused;
    uint64_t max_wait_ns;          /* longest issue-to-satisfied time seen */
    char name[GPUPART_SMLP_NAME_BYTES];
    uint32_t gpc_count;            /* GPC map of the component's GPU, for GPC-packed grants (0: bit order) */
    uint32_t flags;                /* GPUPART_SMLP_* (a reserved 0 in files of libraries before them) */
    uint8_t lock[64];              /* pthread_mutex_t (robust, process-shared, PRIO_INHERIT): opaque here */
    uint8_t reserved1[1024 - 272 - 32 * 16];
    uint32_t gpc_tpcs[32][4];      /* the GPC map (GPUPART_MAX_GPCS), restricted to `tpcs` */
};

struct gpupart_smlp_file {
    struct gpupart_smlp_component header;                          /* offset 0 */
    struct gpupart_smlp_request requests[GPUPART_SMLP_MAX_REQUESTS]; /* offset 1024 */
};

GPUPART_STATIC_ASSERT(sizeof(struct gpupart_smlp_request) == 640, "an SMLP request is 640 bytes");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_smlp_request, levels) == 128, "levels follow 128 bytes");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_smlp_component, lock) == 208, "lock offset");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_smlp_component) == 1024, "an SMLP header is 1024 bytes");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_smlp_component, gpc_tpcs) == 512, "GPC map offset");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_smlp_file) == 1024 + 64 * 640, "an SMLP file is 41984 bytes");

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_SMLP_LAYOUT_H */
