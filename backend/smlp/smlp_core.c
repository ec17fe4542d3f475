/*
 * The SMLP's rules over a component file in memory (smlp_core.h). No system calls: the caller holds the
 * file's mutex and passes the time. Every store that makes a record part of a queue is a release store of
 * `queue`, after the record's other fields: a process killed in the middle of a change leaves a record
 * either in its old queue with stale extra fields (never read there) or complete in its new one.
 */
#include "smlp_core.h"

#include <errno.h>
#include <string.h>

#define RECORDS GPUPART_SMLP_MAX_REQUESTS

static uint32_t popcount4(const uint32_t words[4]) {
    return (uint32_t)(__builtin_popcount(words[0]) + __builtin_popcount(words[1]) + __builtin_popcount(words[2]) +
                      __builtin_popcount(words[3]));
}

static uint32_t queue_of(const struct gpupart_smlp_request* record) {
    return __atomic_load_n(&record->queue, __ATOMIC_ACQUIRE);
}

/* The last store of every change to a record: its fields are complete before it counts in `queue`. */
static void set_queue(struct gpupart_smlp_request* record, uint32_t queue) {
    __atomic_store_n(&record->queue, queue, __ATOMIC_RELEASE);
}

/* The number of L entries H/h: the most a request may list. 0 for a header with a broken shape. */
static uint32_t level_limit(const struct gpupart_smlp_component* header) {
    const uint32_t tpcs = popcount4(header->tpcs);
    if (header->h == 0 || tpcs % header->h != 0) return 0;
    const uint32_t levels = tpcs / header->h;
    return levels <= GPUPART_SMLP_MAX_LEVELS ? levels : 0;
}

uint32_t gpupart_smlp_core_free_tpcs(const struct gpupart_smlp_file* file, uint32_t free_tpcs[4]) {
    for (int w = 0; w < 4; ++w) free_tpcs[w] = file->header.tpcs[w];
    for (unsigned i = 0; i < RECORDS; ++i) {
        const struct gpupart_smlp_request* record = &file->requests[i];
        if (queue_of(record) != GPUPART_SMLP_SQ) continue;
        for (int w = 0; w < 4; ++w) free_tpcs[w] &= ~record->granted[w];
    }
    return popcount4(free_tpcs);
}

uint32_t gpupart_smlp_core_count(const struct gpupart_smlp_file* file, uint32_t queue) {
    uint32_t count = 0;
    for (unsigned i = 0; i < RECORDS; ++i) count += queue_of(&file->requests[i]) == queue;
    return count;
}

/* Whether record a (index ia) comes before record b (index ib) in `queue`'s order (smlp_layout.h). */
static int precedes(const struct gpupart_smlp_file* file, int ia, int ib, uint32_t queue) {
    const struct gpupart_smlp_request* a = &file->requests[ia];
    const struct gpupart_smlp_request* b = &file->requests[ib];
    if (queue == GPUPART_SMLP_PQ && a->priority != b->priority) return a->priority > b->priority;
    if (a->ticket != b->ticket) return a->ticket < b->ticket;
    return ia < ib;
}

int gpupart_smlp_core_head(const struct gpupart_smlp_file* file, uint32_t queue) {
    int head = -1;
    for (int i = 0; i < (int)RECORDS; ++i)
        if (queue_of(&file->requests[i]) == queue && (head < 0 || precedes(file, i, head, queue))) head = i;
    return head;
}

uint32_t gpupart_smlp_core_z(const struct gpupart_smlp_request* record, uint32_t h, uint32_t free_count) {
    if (h == 0 || free_count < h) return 0;
    uint32_t levels = record->level_count;
    if (levels == 0) levels = 1; /* a corrupt record still gets a defined answer */
    if (levels > GPUPART_SMLP_MAX_LEVELS) levels = GPUPART_SMLP_MAX_LEVELS;
    uint32_t m = free_count / h;
    if (m > levels) m = levels;
    uint32_t tolerance = record->tolerance_ppm;
    if (tolerance > GPUPART_SMLP_MAX_TOLERANCE_PPM) tolerance = GPUPART_SMLP_MAX_TOLERANCE_PPM;
    /* L(k) <= L(m) * (1 + tolerance/1e6), in integers: at most 2^32 * 1.001e9 < 2^64. */
    const uint64_t bound = (uint64_t)record->levels[m - 1] * (1000000u + (uint64_t)tolerance);
    for (uint32_t k = 1; k < m; ++k)
        if ((uint64_t)record->levels[k - 1] * 1000000u <= bound) return k * h;
    return m * h;
}

/* Adds up to `count` of the lowest bits of `source` to `out`; returns how many it added. */
static uint32_t take_lowest(const uint32_t source[4], uint32_t count, uint32_t out[4]) {
    uint32_t taken = 0;
    for (int w = 0; w < 4 && taken < count; ++w) {
        uint32_t bits = source[w];
        while (bits != 0 && taken < count) {
            const uint32_t lowest = bits & (~bits + 1u);
            out[w] |= lowest;
            bits &= ~lowest;
            ++taken;
        }
    }
    return taken;
}

void gpupart_smlp_core_choose(const struct gpupart_smlp_component* header, const uint32_t free_tpcs[4], uint32_t count,
                              uint32_t out[4]) {
    uint32_t left[4];
    for (int w = 0; w < 4; ++w) {
        left[w] = free_tpcs[w];
        out[w] = 0;
    }
    const uint32_t gpcs = header->gpc_count <= GPUPART_MAX_GPCS ? header->gpc_count : 0;
    uint32_t used = 0; /* bit g: GPC g already filled from */
    while (count > 0) {
        /* The GPC with the most free TPCs not yet taken (ties: the lower index). */
        int best = -1;
        uint32_t best_free = 0;
        for (uint32_t g = 0; g < gpcs; ++g) {
            if ((used >> g) & 1u) continue;
            uint32_t in_gpc[4];
            for (int w = 0; w < 4; ++w) in_gpc[w] = header->gpc_tpcs[g][w] & left[w];
            const uint32_t n = popcount4(in_gpc);
            if (n > best_free) {
                best = (int)g;
                best_free = n;
            }
        }
        if (best < 0) break;
        used |= 1u << best;
        uint32_t in_gpc[4];
        uint32_t taken_bits[4] = {0, 0, 0, 0};
        for (int w = 0; w < 4; ++w) in_gpc[w] = header->gpc_tpcs[best][w] & left[w];
        count -= take_lowest(in_gpc, count, taken_bits);
        for (int w = 0; w < 4; ++w) {
            out[w] |= taken_bits[w];
            left[w] &= ~taken_bits[w];
        }
    }
    take_lowest(left, count, out); /* no map, or TPCs the map does not name */
}

/* Rule 2: the record enters the SQ with z_i(t) TPCs chosen from I(t). -1 if fewer than h are free. */
static int satisfy(struct gpupart_smlp_file* file, int index, uint64_t now_ns) {
    struct gpupart_smlp_component* header = &file->header;
    struct gpupart_smlp_request* record = &file->requests[index];
    uint32_t free_tpcs[4];
    const uint32_t free_count = gpupart_smlp_core_free_tpcs(file, free_tpcs);
    const uint32_t z = gpupart_smlp_core_z(record, header->h, free_count);
    if (z == 0) return -1;
    uint32_t grant[4];
    gpupart_smlp_core_choose(header, free_tpcs, z, grant);
    for (int w = 0; w < 4; ++w) record->granted[w] = grant[w];
    record->granted_tpcs = z;
    record->satisfied_realtime_ns = now_ns;
    record->inherited_priority = 0;
    record->inheritance = GPUPART_SMLP_INHERIT_NONE;
    record->ticket = header->next_ticket++;
    if (now_ns > record->issued_realtime_ns && now_ns - record->issued_realtime_ns > header->max_wait_ns)
        header->max_wait_ns = now_ns - record->issued_realtime_ns;
    header->satisfied++;
    set_queue(record, GPUPART_SMLP_SQ);
    return 0;
}

/* A record joins the FQ or PQ at its tail (PQ: its place by priority, then this arrival ticket). */
static void enqueue(struct gpupart_smlp_file* file, int index, uint32_t queue) {
    file->requests[index].ticket = file->header.next_ticket++;
    set_queue(&file->requests[index], queue);
}

int gpupart_smlp_core_advance(struct gpupart_smlp_file* file, uint64_t now_ns) {
    const struct gpupart_smlp_component* header = &file->header;
    if (level_limit(header) == 0 || header->fq_length == 0) return 0; /* broken shape: validation says so */
    int moved = 0;
    /* Each step moves a record one queue along (PQ -> FQ -> SQ), so the loop ends; the bound is a guard. */
    for (unsigned step = 0; step < 2 * RECORDS + 2; ++step) {
        uint32_t free_tpcs[4];
        const uint32_t free_count = gpupart_smlp_core_free_tpcs(file, free_tpcs);
        const int fq_head = gpupart_smlp_core_head(file, GPUPART_SMLP_FQ);
        if (fq_head >= 0 && free_count >= header->h && satisfy(file, fq_head, now_ns) == 0) { /* Rule 4 */
            ++moved;
            continue;
        }
        const int pq_head = gpupart_smlp_core_head(file, GPUPART_SMLP_PQ);
        if (pq_head >= 0 && gpupart_smlp_core_count(file, GPUPART_SMLP_FQ) < header->fq_length) { /* Rule 5 */
            enqueue(file, pq_head, GPUPART_SMLP_FQ);
            ++moved;
            continue;
        }
        break;
    }
    return moved;
}

/* Control characters (terminal escapes included) never reach a front end through a label. */
static void copy_label(char out[32], const char* label) {
    memset(out, 0, 32);
    if (label == NULL) return;
    for (int i = 0; i < 31 && label[i] != '\0'; ++i) {
        const unsigned char c = (unsigned char)label[i];
        out[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
}

int gpupart_smlp_core_issue(struct gpupart_smlp_file* file, const struct gpupart_smlp_issue* request, uint64_t now_ns) {
    struct gpupart_smlp_component* header = &file->header;
    const uint32_t limit = level_limit(header);
    if (limit == 0 || header->fq_length == 0) return -EINVAL;
    if (request->pid <= 0 || request->levels == NULL || request->level_count == 0 || request->level_count > limit ||
        request->tolerance_ppm > GPUPART_SMLP_MAX_TOLERANCE_PPM)
        return -EINVAL;
    gpupart_smlp_core_advance(file, now_ns); /* the rules' invariants hold before Rule 1 looks */
    int index = -1;
    for (int i = 0; i < (int)RECORDS && index < 0; ++i)
        if (queue_of(&file->requests[i]) == GPUPART_SMLP_FREE) index = i;
    if (index < 0) return -EBUSY;
    struct gpupart_smlp_request* record = &file->requests[index];
    record->pid = request->pid;
    record->start_time = request->start_time;
    record->tid = request->tid;
    record->priority = request->priority;
    record->issued_realtime_ns = now_ns;
    record->satisfied_realtime_ns = 0;
    memset(record->granted, 0, sizeof record->granted);
    record->granted_tpcs = 0;
    record->level_count = request->level_count;
    record->tolerance_ppm = request->tolerance_ppm;
    record->inherited_priority = 0;
    record->inheritance = GPUPART_SMLP_INHERIT_NONE;
    record->saved_policy = 0;
    record->saved_priority = 0;
    copy_label(record->label, request->label);
    memset(record->reserved, 0, sizeof record->reserved);
    memset(record->levels, 0, sizeof record->levels);
    memcpy(record->levels, request->levels, request->level_count * sizeof request->levels[0]);
    /* Rule 1: immediately satisfiable with h free TPCs (Rule 2 sizes it); else the FQ if it has room. */
    if (satisfy(file, index, now_ns) == 0) return index;
    enqueue(file, index, gpupart_smlp_core_count(file, GPUPART_SMLP_FQ) < header->fq_length ? GPUPART_SMLP_FQ
                                                                                          : GPUPART_SMLP_PQ);
    return index;
}

static int valid_index(int index) { return index >= 0 && index < (int)RECORDS; }

int gpupart_smlp_core_finalize(struct gpupart_smlp_file* file, int index, uint64_t now_ns) {
    if (!valid_index(index) || queue_of(&file->requests[index]) != GPUPART_SMLP_SQ) return -ENOENT;
    set_queue(&file->requests[index], GPUPART_SMLP_FREE);
    file->header.finalized++;
    gpupart_smlp_core_advance(file, now_ns);
    return 0;
}

int gpupart_smlp_core_withdraw(struct gpupart_smlp_file* file, int index, uint64_t now_ns) {
    if (!valid_index(index)) return -ENOENT;
    const uint32_t queue = queue_of(&file->requests[index]);
    if (queue != GPUPART_SMLP_PQ && queue != GPUPART_SMLP_FQ) return -ENOENT;
    set_queue(&file->requests[index], GPUPART_SMLP_FREE);
    gpupart_smlp_core_advance(file, now_ns);
    return 0;
}

int gpupart_smlp_core_drop(struct gpupart_smlp_file* file, uint64_t dead, uint64_t now_ns) {
    int dropped = 0;
    for (unsigned i = 0; i < RECORDS; ++i) {
        if (((dead >> i) & 1u) == 0 || queue_of(&file->requests[i]) == GPUPART_SMLP_FREE) continue;
        set_queue(&file->requests[i], GPUPART_SMLP_FREE);
        file->header.reclaimed++;
        ++dropped;
    }
    gpupart_smlp_core_advance(file, now_ns);
    return dropped;
}

int gpupart_smlp_core_rule3_target(const struct gpupart_smlp_file* file, int32_t* priority) {
    int waiting = 0;
    int32_t highest = 0;
    for (unsigned i = 0; i < RECORDS; ++i) {
        const struct gpupart_smlp_request* record = &file->requests[i];
        const uint32_t queue = queue_of(record);
        if (queue != GPUPART_SMLP_PQ && queue != GPUPART_SMLP_FQ) continue;
        if (!waiting || record->priority > highest) highest = record->priority;
        waiting = 1;
    }
    if (!waiting) return -1;
    int target = -1;
    for (int i = 0; i < (int)RECORDS; ++i) {
        const struct gpupart_smlp_request* record = &file->requests[i];
        if (queue_of(record) != GPUPART_SMLP_SQ || record->priority >= highest) continue;
        if (target < 0 || precedes(file, i, target, GPUPART_SMLP_SQ)) target = i;
    }
    if (target >= 0) *priority = highest;
    return target;
}

/* Gives the records of `queue` new tickets from next_ticket on, in their present order: unique again. */
static int renumber(struct gpupart_smlp_file* file, uint32_t queue) {
    int order[RECORDS];
    int count = 0;
    for (int i = 0; i < (int)RECORDS; ++i) {
        if (queue_of(&file->requests[i]) != queue) continue;
        int at = count++;
        while (at > 0 && precedes(file, i, order[at - 1], GPUPART_SMLP_SQ)) { /* by ticket, then index */
            order[at] = order[at - 1];
            --at;
        }
        order[at] = i;
    }
    for (int k = 0; k < count; ++k) file->requests[order[k]].ticket = file->header.next_ticket++;
    return count;
}

static int tickets_unique(const struct gpupart_smlp_file* file, uint32_t queue) {
    for (unsigned i = 0; i < RECORDS; ++i) {
        if (queue_of(&file->requests[i]) != queue) continue;
        for (unsigned j = i + 1; j < RECORDS; ++j)
            if (queue_of(&file->requests[j]) == queue && file->requests[j].ticket == file->requests[i].ticket) return 0;
    }
    return 1;
}

int gpupart_smlp_core_repair(struct gpupart_smlp_file* file, uint64_t now_ns) {
    struct gpupart_smlp_component* header = &file->header;
    const uint32_t limit = level_limit(header);
    int fixed = 0;
    uint64_t highest_ticket = 0;
    for (unsigned i = 0; i < RECORDS; ++i) {
        struct gpupart_smlp_request* record = &file->requests[i];
        const uint32_t queue = queue_of(record);
        if (queue == GPUPART_SMLP_FREE) continue;
        if (queue > GPUPART_SMLP_SQ || record->pid <= 0 || record->level_count == 0 || record->level_count > limit) {
            set_queue(record, GPUPART_SMLP_FREE); /* no complete record looks like this */
            ++fixed;
            continue;
        }
        record->label[sizeof record->label - 1] = '\0';
        if (record->tolerance_ppm > GPUPART_SMLP_MAX_TOLERANCE_PPM) record->tolerance_ppm = GPUPART_SMLP_MAX_TOLERANCE_PPM;
        if (record->inheritance > GPUPART_SMLP_INHERIT_REFUSED) record->inheritance = GPUPART_SMLP_INHERIT_NONE;
        if (record->ticket > highest_ticket) highest_ticket = record->ticket;
        if (queue != GPUPART_SMLP_SQ) continue;
        for (int w = 0; w < 4; ++w) record->granted[w] &= header->tpcs[w];
        const uint32_t held = popcount4(record->granted);
        if (record->granted_tpcs != held) {
            record->granted_tpcs = held;
            ++fixed;
        }
    }
    if (header->next_ticket <= highest_ticket) {
        header->next_ticket = highest_ticket + 1;
        ++fixed;
    }
    /* More than M in the FQ (Lemma 18 broken): the latest arrivals go back to the PQ. */
    while (header->fq_length > 0 && gpupart_smlp_core_count(file, GPUPART_SMLP_FQ) > header->fq_length) {
        int last = -1;
        for (int i = 0; i < (int)RECORDS; ++i)
            if (queue_of(&file->requests[i]) == GPUPART_SMLP_FQ && (last < 0 || precedes(file, last, i, GPUPART_SMLP_FQ)))
                last = i;
        set_queue(&file->requests[last], GPUPART_SMLP_PQ);
        ++fixed;
    }
    const uint32_t queues[3] = {GPUPART_SMLP_PQ, GPUPART_SMLP_FQ, GPUPART_SMLP_SQ};
    for (int q = 0; q < 3; ++q)
        if (!tickets_unique(file, queues[q])) fixed += renumber(file, queues[q]);
    return fixed + gpupart_smlp_core_advance(file, now_ns);
}
