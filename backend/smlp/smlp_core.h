/*
 * The SMLP's rules (Ali et al., ECRTS 2024, section 3, Rules 1-5 and Rule 3's choice) over a component file in memory
 * (smlp_layout.h): pure functions, no system calls, the time passed in. The caller holds the file's mutex
 * (libgpupart/smlp_api.c) or owns a private copy (the tests, readers). Units are TPCs.
 *
 * Invariants after every function that changes the file (Rules 4 and 5 applied until neither applies):
 *  - the FQ holds at most M records (Lemma 18), and the PQ is empty unless the FQ is full (Rule 5);
 *  - the FQ is empty unless fewer than h TPCs are free (Rule 4);
 *  - SQ grants are inside `tpcs` and pairwise disjoint (Lemma 13): a grant is chosen from the free TPCs,
 *    which are `tpcs` minus the union of SQ grants, so it can never overlap one.
 * Every function reads the file defensively (bounded loops, masked bits), so even a corrupt file is never
 * undefined behaviour; gpupart_smlp_core_validate says whether it is corrupt.
 */
#ifndef GPUPART_SMLP_CORE_H
#define GPUPART_SMLP_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "smlp_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUPART_SMLP_MAX_TOLERANCE_PPM 1000000000u /* L may be 1000 times the best: beyond that, use fewer levels */

/* What a component is made of (the part of the header its creator chooses). */
struct gpupart_smlp_shape {
    struct gpupart_gpu_uuid gpu;
    uint32_t tpcs[4];               /* allowed bits; H = their number */
    uint32_t h;
    uint32_t fq_length;             /* M, 1..GPUPART_SMLP_MAX_REQUESTS */
    uint32_t gpc_count;             /* 0: no GPC map (grants take the lowest free bits) */
    uint32_t gpc_tpcs[GPUPART_MAX_GPCS][4];
};

/* A request as issued (the record's fields the caller chooses). */
struct gpupart_smlp_issue {
    int32_t pid;
    uint64_t start_time;
    int32_t tid;
    int32_t priority;
    const uint32_t* levels;         /* L: levels[k] = length when granted (k+1)*h TPCs */
    uint32_t level_count;           /* 1..H/h */
    uint32_t tolerance_ppm;         /* <= GPUPART_SMLP_MAX_TOLERANCE_PPM */
    const char* label;              /* NULL or text; control characters become '?', cut at 31 bytes */
};

/* Whether `name` is a component name: [A-Za-z0-9_.-]{1,63}, not starting with '.'. */
int gpupart_smlp_core_name_valid(const char* name);

/* Fills a whole file image (zeroed first; the mutex bytes stay zero: the caller initialises them) with
 * state LIVE. The GPC map is restricted to `tpcs`. 0, or -EINVAL with one line in `why`. */
int gpupart_smlp_core_init(struct gpupart_smlp_file* file, const char* name, const struct gpupart_smlp_shape* shape,
                           uint32_t owner_uid, uint64_t now_ns, char* why, size_t why_size);

/* The shape a file was made with (its GPC map as stored: restricted to its TPCs). */
void gpupart_smlp_core_shape(const struct gpupart_smlp_file* file, struct gpupart_smlp_shape* shape);

/* 0 if the two shapes name the same component (the second restricted as init would store it), else
 * -EEXIST with one line saying what differs. */
int gpupart_smlp_core_shape_match(const struct gpupart_smlp_shape* stored, const struct gpupart_smlp_shape* wanted,
                                  char* why, size_t why_size);

/* The header alone: magic, version, size, state, H, h, M, GPC map, name. 0 or -EPROTO with one line. */
int gpupart_smlp_core_validate_header(const struct gpupart_smlp_file* file, char* why, size_t why_size);

/* The header and every record: queue values, levels, grants inside `tpcs`, multiples of h, pairwise
 * disjoint and counted right, tickets below next_ticket, the FQ no longer than M. 0 or -EPROTO. */
int gpupart_smlp_core_validate(const struct gpupart_smlp_file* file, char* why, size_t why_size);

/* I(t): the component's TPCs that no SQ record holds. Returns |I(t)|. */
uint32_t gpupart_smlp_core_free_tpcs(const struct gpupart_smlp_file* file, uint32_t free_tpcs[4]);

/* Records in `queue` (enum gpupart_smlp_queue). */
uint32_t gpupart_smlp_core_count(const struct gpupart_smlp_file* file, uint32_t queue);

/* The head of the FQ (least ticket) or the PQ (highest priority, then least ticket); ties by index. -1 if empty. */
int gpupart_smlp_core_head(const struct gpupart_smlp_file* file, uint32_t queue);

/* z_i(t) for a record when `free_count` TPCs are free: the least k*h (k >= 1) with
 * L(k*h) <= L(m*h) * (1 + tolerance), m = free_count/h (capped at the record's level count: beyond its
 * last entry a request gains nothing). 0 when free_count < h. */
uint32_t gpupart_smlp_core_z(const struct gpupart_smlp_request* record, uint32_t h, uint32_t free_count);

/* The TPCs a grant of `count` takes from `free_tpcs`: GPC-packed when the header has a GPC map (the GPCs
 * with the most free TPCs first, ties by GPC index, lowest bits within a GPC; TPCs outside the map last),
 * else the lowest free bits. Takes min(count, free) TPCs. */
void gpupart_smlp_core_choose(const struct gpupart_smlp_component* header, const uint32_t free_tpcs[4], uint32_t count,
                              uint32_t out[4]);

/* Rules 1 and 2: issues a request; it enters the SQ at once (granted z_i(t) TPCs) if at least h TPCs are
 * free, else the FQ if it has room, else the PQ. Returns the record's index, -EINVAL (bad levels,
 * tolerance, pid), or -EBUSY (all GPUPART_SMLP_MAX_REQUESTS records in use). */
int gpupart_smlp_core_issue(struct gpupart_smlp_file* file, const struct gpupart_smlp_issue* request, uint64_t now_ns);

/* Finalizes an SQ record (its holder unlocks): its TPCs are free again, then Rules 4 and 5. 0 or -ENOENT. */
int gpupart_smlp_core_finalize(struct gpupart_smlp_file* file, int index, uint64_t now_ns);

/* Withdraws a PQ or FQ record (its waiter gave up), then Rules 4 and 5. 0, or -ENOENT (not waiting). */
int gpupart_smlp_core_withdraw(struct gpupart_smlp_file* file, int index, uint64_t now_ns);

/* Frees the records whose bit is set in `dead` (the caller found their processes gone), counts them in
 * `reclaimed`, then Rules 4 and 5. Returns how many records were freed. */
int gpupart_smlp_core_drop(struct gpupart_smlp_file* file, uint64_t dead, uint64_t now_ns);

/* Rules 4 and 5 until neither applies. Returns how many records moved. */
int gpupart_smlp_core_advance(struct gpupart_smlp_file* file, uint64_t now_ns);

/* Rule 3: the SQ record whose holder should inherit a priority now, or -1: the earliest-satisfied SQ
 * record (least ticket) whose own priority is below the highest priority of any suspended (PQ or FQ)
 * request; that priority in *priority. (The seed boosts the earliest *completed* request; completion
 * is not visible to the protocol, so every SQ record is taken for possibly completed.) */
int gpupart_smlp_core_rule3_target(const struct gpupart_smlp_file* file, int32_t* priority);

/* After a locker died inside the mutex (EOWNERDEAD), and after dropping the records of dead processes:
 * frees records with impossible values, recounts grants (granted_tpcs from the bits, grants clipped to
 * `tpcs`), moves FQ records beyond M back to the PQ, makes tickets unique per queue and below
 * next_ticket, then Rules 4 and 5. Returns how many things it fixed (moves by Rules 4-5 included). */
int gpupart_smlp_core_repair(struct gpupart_smlp_file* file, uint64_t now_ns);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_SMLP_CORE_H */
