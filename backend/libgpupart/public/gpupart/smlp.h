/*
 * gpupart's SMLP: the Streaming Multiprocessor Locking Protocol of "Predictable GPU Sharing in
 * Component-Based Real-Time Systems" (Ali et al., ECRTS 2024; gpupart's Ali et al., ECRTS 2024), section 3, Rules 1-5,
 * between the processes of one user that share a set of TPCs (a "component"). Units are TPCs.
 *
 * A process opens the component by name, then brackets each GPU kernel with lock and unlock:
 *
 *     struct gpupart_smlp* smlp;
 *     gpupart_smlp_open("vision", &config, &smlp);           // first one creates it, others pass NULL
 *     uint32_t lengths[] = {900, 470, 330, 250, 250, 250};   // L: time with 1h, 2h, ... TPCs
 *     struct gpupart_smlp_request_spec spec = {50, lengths, 6, 0, "detector"};
 *     struct gpupart_smlp_grant grant;
 *     gpupart_smlp_lock(smlp, &spec, &grant);                // blocks until granted
 *     libsmctrl_set_next_mask_ext(grant.disable_mask);       // the kernel runs on grant.allowed only
 *     launch(); cudaStreamSynchronize(stream);
 *     gpupart_smlp_unlock(smlp, &grant);
 *
 * Rules. A request is granted at once when at least h TPCs are free, sized by z: the fewest k*h TPCs whose
 * length L is within `tolerance_ppm` of the length with all free TPCs (so a kernel that cannot use more
 * TPCs does not take them). Otherwise it waits in a FIFO queue of at most M requests, fed from a priority
 * queue; whenever TPCs are freed, the FIFO's head is granted what is free. Grants never overlap.
 *
 * Priorities (Rule 3). `priority` is the job's priority, higher = more urgent. While a request of higher
 * priority waits, the thread holding the earliest grant of a lower priority is raised to SCHED_FIFO at the
 * waiter's priority (clamped to 1..99), so that it reaches its unlock quickly; its own policy is restored
 * at unlock. Linux allows this only with CAP_SYS_NICE (root) or an RLIMIT_RTPRIO (ulimit -r) at least that
 * priority for the holder; otherwise the component records the inheritance as refused and counts it, and
 * the protocol goes on without it.
 *
 * Crashes. A process that dies holding TPCs or waiting is found by pid and start time (within ~20 ms by any
 * waiter) and its TPCs are returned; a process that dies inside the component's mutex is repaired after
 * by the next locker. All processes of a component must see one another's pids (one pid namespace).
 *
 * Every function returns 0 or an errno value and never aborts; gpupart_smlp_last_error() then says why
 * in one line (thread-local, valid until the thread's next call). Handles are for one process: not
 * across fork().
 */
#ifndef GPUPART_SMLP_H
#define GPUPART_SMLP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUPART_SMLP_API __attribute__((visibility("default")))

struct gpupart_smlp; /* an open component */

/* What a component is: chosen by its creator, checked by everyone who opens it with a config. */
struct gpupart_smlp_config {
    unsigned char gpu_uuid[16];  /* cuDeviceGetUuid's bytes of the component's GPU; all zero: not said */
    uint32_t tpcs[4];            /* the component's TPCs (allowed bits of TPC numbers, as the libsmctrl API's); H = their number */
    uint32_t h;                  /* grant granularity in TPCs: divides H, H/h <= 128 */
    uint32_t fq_length;          /* M: the FIFO queue's length, 1..64 */
    uint32_t gpc_count;          /* 0: no GPC map (grants take the lowest free TPCs) */
    uint32_t gpc_tpcs[32][4];    /* each GPC's TPC numbers (libsmctrl_get_gpc_info_ext): grants are packed into few GPCs */
};

struct gpupart_smlp_request_spec {
    int32_t priority;            /* higher = more urgent; SCHED_FIFO 1..99 when inherited (Rule 3) */
    const uint32_t* levels;      /* L: levels[k] = the kernel's length with (k+1)*h TPCs (any unit) */
    uint32_t level_count;        /* 1..H/h; beyond the last entry more TPCs are taken to gain nothing */
    uint32_t tolerance_ppm;      /* z takes the fewest TPCs within this of the best length: 0 = exact */
    const char* label;           /* shown by gpupart's front ends; NULL or up to 31 bytes */
};

struct gpupart_smlp_grant {
    uint32_t allowed[4];         /* the TPCs granted (allowed bits) */
    uint32_t count;              /* how many (a multiple of h) */
    uint64_t ticket;             /* names the grant in the component (its place in the satisfied queue) */
    __extension__ unsigned __int128 disable_mask; /* ~allowed: for libsmctrl_set_next_mask_ext and kin */
};

/* Opens "<registry>/<user dir>/<component>.smlp". With a config, creates it if missing (a racing creator
 * joins the winner's file) and checks an existing one matches (EEXIST if not); NULL joins an existing one
 * (ENOENT if none). Names are [A-Za-z0-9_.-]{1,63}, not starting with '.'. Refuses files that are not
 * regular, are links, belong to another user, or have another size, layout or corrupt contents. */
GPUPART_SMLP_API int gpupart_smlp_open(const char* component, const struct gpupart_smlp_config* config,
                                       struct gpupart_smlp** out);

/* Issues a request and blocks until it is granted. EINVAL (bad spec), EBUSY (64 requests outstanding),
 * EPROTO (the component file is corrupt). */
GPUPART_SMLP_API int gpupart_smlp_lock(struct gpupart_smlp* smlp, const struct gpupart_smlp_request_spec* spec,
                                       struct gpupart_smlp_grant* grant);

/* As gpupart_smlp_lock, waiting at most timeout_ns (CLOCK_MONOTONIC; 0: only if granted at once).
 * ETIMEDOUT: the request was withdrawn and holds nothing. */
GPUPART_SMLP_API int gpupart_smlp_lock_timed(struct gpupart_smlp* smlp, const struct gpupart_smlp_request_spec* spec,
                                             struct gpupart_smlp_grant* grant, uint64_t timeout_ns);

/* Returns a grant's TPCs (the request is finalized) and restores the caller's scheduling policy if it
 * inherited a priority. EINVAL: not a grant this process holds. */
GPUPART_SMLP_API int gpupart_smlp_unlock(struct gpupart_smlp* smlp, const struct gpupart_smlp_grant* grant);

/* Withdraws or unlocks whatever requests this handle still has, and frees it. NULL is ignored. */
GPUPART_SMLP_API int gpupart_smlp_close(struct gpupart_smlp* smlp);

/* One line about this thread's last failed call ("" if none). */
GPUPART_SMLP_API const char* gpupart_smlp_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_SMLP_H */
