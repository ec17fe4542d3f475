/*
 * The shim's CUDA-graph follower: makes a TPC mask change reach graph execs that were uploaded before it.
 * Measured on the H100/H200, driver 580 (docs/cuda-graphs.md):
 *  - an exec's kernel descriptors are built at its upload and never again, so it keeps that mask;
 *  - turning a kernel node off and on again (cuGraphNodeSetEnabled) makes the driver rebuild that node's
 *    descriptor at the next launch or upload, with the launch callback running (graph_nodes.c);
 *  - node handles of a destroyed graph are refused (CUDA_ERROR_INVALID_VALUE), so when the application
 *    destroys a graph whose execs live on (PyTorch does, right after instantiating), the shim hands
 *    cuGraphDestroy an empty graph of its own instead and destroys the real one with its last exec.
 * Two ways to re-mask, both here: ahead of the replay, by the shim's re-mask thread (graph_remasker.c),
 * woken by the change, which toggles and uploads each exec while no call of the application's is inside
 * an exec; and at the first launch of an exec after a change, for what the thread has not reached.
 * Costs: a graph call while nothing changed pays an atomic add and subtract and three loads; an exec the
 * thread did not reach pays its re-mask at its first launch (about 1.7 us per node on the H200).
 * Rules: every driver call made here runs with t_in_shim set, so callbacks it causes return at once; a
 * record layout other than the measured one switches the follower off and says so in the slot.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph_records.h"
#include "graph_remasker.h"
#include "registry_seqlock.h"
#include "registry_slot.h"
#include "shim_graphs.h"

/* Callback ids of the driver-API domain: the numbers of CUPTI's public cupti_driver_cbid.h. */
enum {
    CB_INSTANTIATE = 513, CB_LAUNCH = 514, CB_LAUNCH_PTSZ = 515, CB_EXEC_DESTROY = 516, CB_GRAPH_DESTROY = 517,
    CB_INSTANTIATE_V2 = 578, CB_UPLOAD = 580, CB_UPLOAD_PTSZ = 581, CB_INSTANTIATE_WITH_FLAGS = 643,
    CB_INSTANTIATE_WITH_PARAMS = 656, CB_INSTANTIATE_WITH_PARAMS_PTSZ = 657,
};
static const int kFollowedCallbacks[] = {CB_INSTANTIATE, CB_LAUNCH, CB_LAUNCH_PTSZ, CB_EXEC_DESTROY, CB_GRAPH_DESTROY,
                                         CB_INSTANTIATE_V2, CB_UPLOAD, CB_UPLOAD_PTSZ, CB_INSTANTIATE_WITH_FLAGS,
                                         CB_INSTANTIATE_WITH_PARAMS, CB_INSTANTIATE_WITH_PARAMS_PTSZ};
/* For the re-mask thread: every call that changes an exec (the thread must never be in the driver on an
 * exec at the same time: the driver does not lock one), and every call that may destroy a context. */
/* On execs: cuGraphExec{KernelNode,Memcpy,Memset,HostNode,ChildGraphNode}SetParams, cuGraphExecUpdate, the
 * event and semaphore node setters, cuGraphNodeSetEnabled and GetEnabled, cuGraphExecGetFlags,
 * cuGraphExecBatchMemOpNodeSetParams, their _v2 and cuGraphExecNodeSetParams. On the graphs execs are made
 * from (the thread passes their node handles): cuGraphKernelNodeSetParams (and _v2), cuGraphDestroyNode,
 * cuGraphClone, cuGraphDebugDotPrint, cuGraphAddNode (and _v2), cuGraphNodeSetParams and
 * cuStreamBeginCaptureToGraph (and _ptsz). Instantiation is counted too (kind_of). */
static const int kExecCalls[] = {538, 561, 562, 563, 564, 586, 595, 596, 624, 625, 650, 651, 658, 672, 692, 696, 714,
                                 521, 522, 523, 628, 691, 712, 713, 720, 721, 723};
/* cuCtxDestroy (and _v2), cuDevicePrimaryCtxRelease and cuDevicePrimaryCtxReset (and their _v2), cuGreenCtxDestroy. */
static const int kContextCalls[] = {11, 322, 387, 389, 544, 545, 744};

/* The driver's callback record for the driver-API domain, as measured on driver 580 (not CUPTI's
 * CUpti_CallbackData): u32 size at 0, CUresult* at 40, function name at 48, parameter struct at 56,
 * u32 site (0 enter, 1 exit) at 84. Every parameter struct used here starts with the exec or graph. */
#define RECORD_MIN_SIZE 0x68u
#define RECORD_RESULT 40
#define RECORD_NAME 48
#define RECORD_PARAMS 56
#define RECORD_SITE 84
#define SITE_ENTER 0u
#define SITE_EXIT 1u
#define INSTANTIATE_FLAG_UPLOAD 2ull /* CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD: uploaded inside the call */
#define DRAIN_WAIT_NS 2000000ll /* how long the thread waits for the application's graph calls to leave */

enum call_kind { CALL_OTHER, CALL_LAUNCH, CALL_EXEC, CALL_INSTANTIATE, CALL_EXEC_DESTROY, CALL_GRAPH_DESTROY, CALL_CONTEXT };

#define BOOK gpupart_graph_book
static uint32_t g_disabled;                    /* the record layout is not the measured one */
/* The re-mask thread's exclusion: the application's graph calls count themselves in g_inflight while they
 * are in the driver; the thread raises g_remasking (under the book's lock) and waits for g_inflight to
 * drain, and a call that sees g_remasking waits for the lock. Each side writes its word, then reads the
 * other's (sequentially consistent), so one of the two always sees the other. */
static uint32_t g_inflight, g_remasking;
static uint32_t g_ahead;                       /* the thread may run: callbacks, upload, GPUPART_GRAPH_REMASK */
static uint32_t g_remasker_started, g_stopping;
static __thread int t_in_shim;
static __thread uint32_t t_counted;            /* this thread's graph calls counted in g_inflight */
static __thread uint64_t t_instantiate_seen;   /* the control generation at this thread's instantiation's enter */

static void begin_counted(void) {
    __atomic_add_fetch(&g_inflight, 1u, __ATOMIC_SEQ_CST);
    ++t_counted;
}
static void end_counted(void) {
    --t_counted;
    __atomic_sub_fetch(&g_inflight, 1u, __ATOMIC_SEQ_CST);
}

/* First launch or upload of `exec` since the control block changed: bring it up to date. */
static void on_launch_slow(struct gpupart_slot_file* slot, void* exec) {
    struct gpupart_control control;
    if (gpupart_control_read(&slot->control, &control, 4) != 0) return; /* a write is in progress: next time */
    gpupart_graph_book_adopt(control.current.generation);
    struct exec_record* rec = gpupart_graph_book_find(exec);
    if (rec != NULL && gpupart_graph_book_stale(rec)) gpupart_graph_book_bring_up_to_date(slot, rec, 0);
    gpupart_graph_book_mark_synced_if_done(control.seq);
}

/* The application instantiated an exec: its record, and the re-mask thread once there is an exec. */
static void on_instantiated(struct gpupart_slot_file* slot, int cbid, void* const* params) {
    void* const* exec_out = (void* const*)params[0];
    void* graph = params[1];
    if (exec_out == NULL || *exec_out == NULL || graph == NULL) return;
    uint64_t flags = 0;
    if (cbid == CB_INSTANTIATE_WITH_FLAGS) flags = (uint64_t)(uintptr_t)params[2];
    if ((cbid == CB_INSTANTIATE_WITH_PARAMS || cbid == CB_INSTANTIATE_WITH_PARAMS_PTSZ) && params[2] != NULL)
        flags = *(const uint64_t*)params[2]; /* CUDA_GRAPH_INSTANTIATE_PARAMS starts with its flags */
    struct gpupart_control control; /* the mask its upload will get: not an older one the follower last saw */
    if (gpupart_control_read(&slot->control, &control, 4) == 0) gpupart_graph_book_adopt(control.current.generation);
    /* Uploaded inside the instantiation: it carries the mask of then, which a change since has made stale. */
    const uint64_t dated = (flags & INSTANTIATE_FLAG_UPLOAD) != 0 ? t_instantiate_seen : BOOK.latest_generation;
    if (gpupart_graph_book_instantiated(slot, *exec_out, graph, flags, dated) && g_ahead && !g_remasker_started)
        g_remasker_started = gpupart_graph_remasker_start(slot) == 0;
}

/* Waits, under the book's lock and with g_remasking raised, until no graph call of the application is in the driver.
 * Calls that begin meanwhile see g_remasking and wait for the lock; those already in leave within
 * microseconds, unless one blocks in the driver (a full queue): then the thread gives up for now. */
static int drained(void) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (unsigned spin = 0;; ++spin) {
        if (__atomic_load_n(&g_inflight, __ATOMIC_SEQ_CST) == 0) return 1;
        if ((spin & 63u) == 63u) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            if ((now.tv_sec - start.tv_sec) * 1000000000ll + (now.tv_nsec - start.tv_nsec) > DRAIN_WAIT_NS) return 0;
            sched_yield();
        }
    }
}

int gpupart_graphs_remask_ahead(struct gpupart_slot_file* slot) {
    t_in_shim = 1; /* the thread's own driver calls: their callbacks return at once */
    pthread_mutex_lock(&BOOK.lock);
    int result = GPUPART_AHEAD_DONE;
    struct gpupart_control control;
    if (g_stopping || __atomic_load_n(&g_disabled, __ATOMIC_RELAXED)) goto out;
    /* A slot shrunk under the process: touching its last page lets the slot guard swap in its private copy
     * now (gpupart_shim.c, touch_last_page), before the control block is read. */
    (void)*(const volatile uint8_t*)((const uint8_t*)slot + GPUPART_SLOT_FILE_SIZE - 1);
    if (gpupart_control_read(&slot->control, &control, 4) != 0) {
        result = GPUPART_AHEAD_BUSY; /* a write is in progress */
        goto out;
    }
    if (control.seq == 0) goto out; /* zeros, never a written block: nothing to adopt */
    gpupart_graph_book_adopt(control.current.generation);
    struct exec_record* rec = gpupart_graph_book_next_for_thread();
    if (rec == NULL) { /* nothing left that the thread can reach: the rest waits for its launch */
        gpupart_graph_book_mark_synced_if_done(control.seq);
        gpupart_store64(&slot->counters.graph_settled_generation, BOOK.latest_generation);
        goto out;
    }
    __atomic_store_n(&g_remasking, 1u, __ATOMIC_SEQ_CST);
    if (drained()) {
        gpupart_graph_book_bring_up_to_date(slot, rec, 1);
        result = GPUPART_AHEAD_ONE;
    } else {
        result = GPUPART_AHEAD_BUSY;
    }
    __atomic_store_n(&g_remasking, 0u, __ATOMIC_SEQ_CST);
out:
    gpupart_graph_book_publish(slot);
    pthread_mutex_unlock(&BOOK.lock);
    return result;
}

void gpupart_graphs_stop_ahead(void) {
    pthread_mutex_lock(&BOOK.lock); /* waits out a re-mask in progress: after this the thread calls no driver */
    g_stopping = 1;
    pthread_mutex_unlock(&BOOK.lock);
}

static enum call_kind kind_of(int cbid) {
    switch (cbid) {
    case CB_LAUNCH: case CB_LAUNCH_PTSZ: case CB_UPLOAD: case CB_UPLOAD_PTSZ: return CALL_LAUNCH;
    case CB_INSTANTIATE: case CB_INSTANTIATE_V2: case CB_INSTANTIATE_WITH_FLAGS: case CB_INSTANTIATE_WITH_PARAMS:
    case CB_INSTANTIATE_WITH_PARAMS_PTSZ: return CALL_INSTANTIATE;
    case CB_EXEC_DESTROY: return CALL_EXEC_DESTROY;
    case CB_GRAPH_DESTROY: return CALL_GRAPH_DESTROY;
    default: break;
    }
    for (size_t i = 0; i < sizeof kExecCalls / sizeof kExecCalls[0]; ++i)
        if (kExecCalls[i] == cbid) return CALL_EXEC;
    for (size_t i = 0; i < sizeof kContextCalls / sizeof kContextCalls[0]; ++i)
        if (kContextCalls[i] == cbid) return CALL_CONTEXT;
    return CALL_OTHER;
}

/* The follower stops. Under the lock: the re-mask thread finishes the step it is in and starts none after,
 * so graph calls that no longer count themselves never meet it in the driver. */
static void layout_unknown(struct gpupart_slot_file* slot) {
    pthread_mutex_lock(&BOOK.lock);
    __atomic_store_n(&g_disabled, 1u, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&BOOK.lock);
    gpupart_store64(&slot->counters.graph_tracking, GPUPART_GRAPHS_LAYOUT_UNKNOWN);
    gpupart_store64(&slot->counters.graph_remasker, 0); /* gpupart set has nothing to wait for */
}

void gpupart_graphs_on_api(struct gpupart_slot_file* slot, int cbid, const void* record_pointer) {
    if (t_in_shim || record_pointer == NULL) return;
    const enum call_kind kind = kind_of(cbid);
    const unsigned char* record = record_pointer;
    uint32_t size, site;
    memcpy(&size, record, sizeof size);
    if (kind == CALL_OTHER) return;
    if (size < RECORD_MIN_SIZE) {
        layout_unknown(slot);
        return;
    }
    memcpy(&site, record + RECORD_SITE, sizeof site);
    if ((kind == CALL_LAUNCH || kind == CALL_EXEC) && site == SITE_EXIT) { /* the call leaves the driver */
        if (t_counted > 0) end_counted();
        return;
    }
    /* An instantiation was counted at its enter (below): out before its exit takes the lock. */
    if (kind == CALL_INSTANTIATE && site == SITE_EXIT && t_counted > 0) end_counted();
    if (__atomic_load_n(&g_disabled, __ATOMIC_RELAXED)) return;
    if (kind == CALL_LAUNCH && site == SITE_ENTER) {
        if (cbid == CB_LAUNCH || cbid == CB_LAUNCH_PTSZ) { /* count graph launches once (the enter site) */
            gpupart_add64(&slot->counters.graph_launches, 1);
            /* A replay is a launch for "last launch": a process that only replays graphs is not idle. */
            gpupart_store64(&slot->counters.last_launch_realtime_ns, gpupart_coarse_realtime_ns());
        }
        /* The launch path while nothing changed: no lock, no record field beyond those; counted in for the
         * re-mask thread only where one may run. */
        const int ahead = (int)__atomic_load_n(&g_ahead, __ATOMIC_RELAXED);
        if (ahead) begin_counted();
        if (__atomic_load_n(&slot->control.seq, __ATOMIC_SEQ_CST) == __atomic_load_n(&BOOK.synced_seq, __ATOMIC_ACQUIRE) &&
            !__atomic_load_n(&g_remasking, __ATOMIC_SEQ_CST))
            return;
        if (ahead) end_counted();
    } else if (kind == CALL_EXEC || (kind == CALL_INSTANTIATE && site == SITE_ENTER)) {
        if (site != SITE_ENTER) return;
        if (kind == CALL_INSTANTIATE) { /* the generation an upload inside it would carry (0: unknown, stale) */
            struct gpupart_control seen;
            t_instantiate_seen = gpupart_control_read(&slot->control, &seen, 4) == 0 ? seen.current.generation : 0;
        }
        if (!__atomic_load_n(&g_ahead, __ATOMIC_RELAXED)) return; /* no thread to keep out */
        begin_counted();
        if (!__atomic_load_n(&g_remasking, __ATOMIC_SEQ_CST)) return;
        end_counted(); /* the thread is in the driver on an exec: wait for it */
        pthread_mutex_lock(&BOOK.lock);
        begin_counted();
        pthread_mutex_unlock(&BOOK.lock);
        return;
    } else if (kind == CALL_CONTEXT) {
        if (site != SITE_ENTER) return;
        t_in_shim = 1;
        pthread_mutex_lock(&BOOK.lock);
        gpupart_graph_book_contexts_going();
        pthread_mutex_unlock(&BOOK.lock);
        t_in_shim = 0;
        return;
    }
    const char* name;
    memcpy(&name, record + RECORD_NAME, sizeof name);
    if (name == NULL || strncmp(name, "cuGraph", 7) != 0) {
        layout_unknown(slot);
        return;
    }
    void* const* params;
    int* result;
    memcpy(&params, record + RECORD_PARAMS, sizeof params);
    memcpy(&result, record + RECORD_RESULT, sizeof result);
    const int instantiate = kind == CALL_INSTANTIATE;
    if (params == NULL || (instantiate ? site != SITE_EXIT || result == NULL || *result != 0 : site != SITE_ENTER)) return;
    t_in_shim = 1;
    pthread_mutex_lock(&BOOK.lock);
    if (kind == CALL_LAUNCH) {
        on_launch_slow(slot, params[0]);
        /* Under the lock: the thread cannot be in the driver now, and waits for this call. */
        if (__atomic_load_n(&g_ahead, __ATOMIC_RELAXED)) begin_counted();
    } else if (instantiate) {
        on_instantiated(slot, cbid, params);
    } else if (kind == CALL_EXEC_DESTROY) {
        gpupart_graph_book_exec_destroyed(params[0]);
    } else if (kind == CALL_GRAPH_DESTROY) {
        gpupart_graph_book_graph_destroyed((void**)params);
    }
    /* A new exec carries the newest generation (on_instantiated adopts a newer one, which resets the sync)
     * and a destroyed one leaves nothing stale, so neither sends later launches down the slow path. */
    gpupart_graph_book_publish(slot);
    pthread_mutex_unlock(&BOOK.lock);
    t_in_shim = 0;
}

/* Enables `cbids` for the subscription; on a refusal takes back those it enabled and says which. */
static int enable_all(gpupart_enable_fn enable, uint32_t handle, const int* cbids, size_t count, int* refused) {
    for (size_t i = 0; i < count; ++i)
        if (enable(1, handle, GPUPART_DOMAIN_DRIVER_API, cbids[i]) != 0) {
            for (size_t k = 0; k < i; ++k) enable(0, handle, GPUPART_DOMAIN_DRIVER_API, cbids[k]);
            *refused = cbids[i];
            return -1;
        }
    return 0;
}

/* The calls the re-mask thread needs to see, enabled; 0, or -1 (none left enabled) after one line on stderr. */
static int enable_ahead(gpupart_enable_fn enable, uint32_t handle) {
    int refused = 0;
    if (enable_all(enable, handle, kExecCalls, sizeof kExecCalls / sizeof kExecCalls[0], &refused) == 0) {
        if (enable_all(enable, handle, kContextCalls, sizeof kContextCalls / sizeof kContextCalls[0], &refused) == 0) return 0;
        for (size_t k = 0; k < sizeof kExecCalls / sizeof kExecCalls[0]; ++k) enable(0, handle, GPUPART_DOMAIN_DRIVER_API, kExecCalls[k]);
    }
    fprintf(stderr, "gpupart-shim: CUDA refused the callback %d: CUDA graphs are re-masked at their first launch after a "
            "change, not ahead of it\n", refused);
    return -1;
}

void gpupart_graphs_setup(void* libcuda, uint32_t handle, gpupart_enable_fn enable, struct gpupart_slot_file* slot) {
    int refused = 0;
    if (gpupart_graph_nodes_resolve(libcuda) != 0) {
        gpupart_store64(&slot->counters.graph_tracking, GPUPART_GRAPHS_UNAVAILABLE);
        return;
    }
    /* Decided before any graph callback is on: a graph call counts itself for the thread from the first. */
    const int ahead = gpupart_graph_remasker_wanted() && gpupart_graph_can_upload() && enable_ahead(enable, handle) == 0;
    __atomic_store_n(&g_ahead, (uint32_t)ahead, __ATOMIC_RELEASE);
    if (enable_all(enable, handle, kFollowedCallbacks, sizeof kFollowedCallbacks / sizeof kFollowedCallbacks[0], &refused) != 0) {
        fprintf(stderr, "gpupart-shim: CUDA refused the graph-call callback %d: CUDA graphs keep the mask of their upload\n", refused);
        __atomic_store_n(&g_ahead, 0u, __ATOMIC_RELEASE); /* no exec is ever recorded: no thread starts */
        gpupart_store64(&slot->counters.graph_tracking, GPUPART_GRAPHS_UNAVAILABLE);
        return;
    }
    gpupart_store64(&slot->counters.graph_tracking, GPUPART_GRAPHS_FOLLOWED);
}

void gpupart_graphs_after_fork(void) {
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&BOOK.lock, &fresh, sizeof fresh);
    /* The child has no re-mask thread, and no other thread of the parent's is in the driver any more. */
    g_remasker_started = 0;
    g_stopping = 0;
    g_inflight = 0;
    g_remasking = 0;
    t_counted = 0;
}
