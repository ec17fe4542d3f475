/*
 * The shim's CUDA-graph follower: makes a TPC mask change reach graph execs that were uploaded before it.
 * Measured on the H100/H200, driver 580 (docs/cuda-graphs.md):
 *  - an exec's kernel descriptors are built at its upload and never again, so it keeps that mask;
 *  - turning a kernel node off and on again (cuGraphNodeSetEnabled) makes the driver rebuild that node's
 *    descriptor at the next launch, with the launch callback running; this works from inside the enter
 *    callback of that very cuGraphLaunch, for kernel nodes inside child graphs too (through the exec,
 *    with the child graph's node handles), and for execs instantiated for device launch;
 *  - node handles of a destroyed graph are refused (CUDA_ERROR_INVALID_VALUE), so when the application
 *    destroys a graph whose execs live on (PyTorch does, right after instantiating), the shim hands
 *    cuGraphDestroy an empty graph of its own instead and destroys the real one with its last exec.
 * Costs: a launch while nothing changed pays two atomic loads and a compare; the first launch of an exec
 * after a change takes a lock and toggles its enabled kernel nodes (about 1.4 us per node on the H100,
 * 1.7 us per node for the whole first replay on the H200: README, "CUDA graphs").
 * Rules: every driver call made here runs with t_in_shim set, so callbacks it causes return at once; a
 * record layout other than the measured one switches the follower off and says so in the slot.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_seqlock.h"
#include "registry_slot.h"
#include "shim_graphs.h"
#include "shim_table.h"

/* Callback ids of the driver-API domain: the numbers of CUPTI's public cupti_driver_cbid.h. */
enum {
    CB_INSTANTIATE = 513, CB_LAUNCH = 514, CB_LAUNCH_PTSZ = 515, CB_EXEC_DESTROY = 516, CB_GRAPH_DESTROY = 517,
    CB_INSTANTIATE_V2 = 578, CB_UPLOAD = 580, CB_UPLOAD_PTSZ = 581, CB_INSTANTIATE_WITH_FLAGS = 643,
    CB_INSTANTIATE_WITH_PARAMS = 656, CB_INSTANTIATE_WITH_PARAMS_PTSZ = 657,
};
static const int kFollowedCallbacks[] = {CB_INSTANTIATE, CB_LAUNCH, CB_LAUNCH_PTSZ, CB_EXEC_DESTROY, CB_GRAPH_DESTROY,
                                         CB_INSTANTIATE_V2, CB_UPLOAD, CB_UPLOAD_PTSZ, CB_INSTANTIATE_WITH_FLAGS,
                                         CB_INSTANTIATE_WITH_PARAMS, CB_INSTANTIATE_WITH_PARAMS_PTSZ};

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

#define NODE_TYPE_KERNEL 0
#define NODE_TYPE_GRAPH 4
#define NODE_TYPE_CONDITIONAL 13
#define INSTANTIATE_FLAG_DEVICE_LAUNCH 4ull
#define MAX_CHILD_DEPTH 16

typedef int (*get_nodes_fn)(void* graph, void** nodes, size_t* count);
typedef int (*node_type_fn)(void* node, int* type);
typedef int (*child_graph_fn)(void* node, void** graph);
typedef int (*get_enabled_fn)(void* exec, void* node, unsigned* enabled);
typedef int (*set_enabled_fn)(void* exec, void* node, unsigned enabled);
typedef int (*graph_create_fn)(void** graph, unsigned flags);
typedef int (*graph_destroy_fn)(void* graph);
static struct {
    get_nodes_fn get_nodes;
    node_type_fn node_type;
    child_graph_fn child_graph;
    get_enabled_fn get_enabled;
    set_enabled_fn set_enabled;
    graph_create_fn graph_create;
    graph_destroy_fn graph_destroy;
} g_cu;

/* Why an exec cannot be re-masked (exec_record.unfollowable). */
enum { FOLLOWED = 0, UNSEEN, CONDITIONAL_BODIES, GRAPH_LOST, NODES_UNREADABLE, REMASK_REFUSED };

struct exec_record {
    void* exec;
    void* graph;
    uint64_t generation;        /* control generation its descriptors carry (or get at their upload) */
    uint64_t failed_generation; /* generation at which re-masking it failed (0: none) */
    uint32_t unfollowable;
    uint32_t device_launch;
    size_t node_count;
    void** nodes;               /* its kernel nodes, those of child graphs included */
};
struct graph_record {
    void* graph;
    uint32_t live_execs;
    uint32_t held;              /* the application destroyed it; the shim keeps it for its execs */
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gpupart_table g_execs, g_graphs;
static uint64_t g_latest_generation;          /* the newest control generation the follower has seen */
static uint64_t g_current, g_failed_at_latest; /* execs at g_latest_generation; execs that failed at it */
static uint64_t g_unfollowable, g_device_launch;
static uint32_t g_synced_seq = 1u;             /* control.seq at which no exec can be brought up to date; odd = none */
static uint32_t g_disabled;                    /* the record layout is not the measured one */
static __thread int t_in_shim;

static void publish(struct gpupart_slot_file* slot) {
    gpupart_store64(&slot->counters.graph_generation, g_latest_generation);
    gpupart_store64(&slot->counters.graph_execs, g_execs.size);
    gpupart_store64(&slot->counters.graph_current, g_current);
    gpupart_store64(&slot->counters.graph_unfollowable, g_unfollowable);
    gpupart_store64(&slot->counters.graph_device_launch, g_device_launch);
}

/* Appends one kernel node to `rec`, growing its array geometrically. 0, or -1 when out of memory. */
static int push_node(struct exec_record* rec, size_t* capacity, void* node) {
    if (rec->node_count == *capacity) {
        const size_t grown_capacity = *capacity ? *capacity * 2 : 16;
        void** grown = realloc(rec->nodes, grown_capacity * sizeof(void*));
        if (grown == NULL) return -1;
        rec->nodes = grown;
        *capacity = grown_capacity;
    }
    rec->nodes[rec->node_count++] = node;
    return 0;
}

/* Appends the kernel nodes of `graph` (and of its child graphs) to `rec`; says why some cannot be reached. */
static void collect_nodes(struct exec_record* rec, size_t* capacity, void* graph, int depth) {
    size_t count = 0;
    if (depth > MAX_CHILD_DEPTH || g_cu.get_nodes(graph, NULL, &count) != 0) {
        rec->unfollowable = NODES_UNREADABLE;
        return;
    }
    if (count == 0) return;
    void** nodes = calloc(count, sizeof(void*)); /* this level's own list: children append to rec->nodes */
    if (nodes == NULL || g_cu.get_nodes(graph, nodes, &count) != 0) {
        free(nodes);
        rec->unfollowable = NODES_UNREADABLE;
        return;
    }
    for (size_t i = 0; i < count; ++i) {
        int type = -1;
        void* child = NULL;
        if (g_cu.node_type(nodes[i], &type) != 0) {
            rec->unfollowable = NODES_UNREADABLE;
        } else if (type == NODE_TYPE_KERNEL) {
            if (push_node(rec, capacity, nodes[i]) != 0) rec->unfollowable = NODES_UNREADABLE;
        } else if (type == NODE_TYPE_GRAPH) {
            if (g_cu.child_graph(nodes[i], &child) == 0) collect_nodes(rec, capacity, child, depth + 1);
            else rec->unfollowable = NODES_UNREADABLE;
        } else if (type == NODE_TYPE_CONDITIONAL && rec->unfollowable == FOLLOWED) {
            rec->unfollowable = CONDITIONAL_BODIES; /* the driver offers no way to read a body graph back */
        }
    }
    free(nodes);
}

/* Turns every kernel node the application left enabled off and on again: the driver rebuilds their
 * descriptors at this exec's next launch. 0 when every toggle was accepted. */
static int remask(const struct exec_record* rec) {
    int failed = 0;
    for (size_t i = 0; i < rec->node_count; ++i) {
        unsigned enabled = 0;
        if (g_cu.get_enabled(rec->exec, rec->nodes[i], &enabled) != 0) {
            failed = 1;
            continue;
        }
        if (!enabled) continue; /* the application disabled it: leave it so */
        if (g_cu.set_enabled(rec->exec, rec->nodes[i], 0) != 0) {
            failed = 1;
            continue;
        }
        /* Never leave a node off that the application had on: retry once, then count it as an error. */
        if (g_cu.set_enabled(rec->exec, rec->nodes[i], 1) != 0 && g_cu.set_enabled(rec->exec, rec->nodes[i], 1) != 0)
            failed = 1;
    }
    return failed;
}

static void forget_exec(struct exec_record* rec) {
    if (rec->generation == g_latest_generation) --g_current;
    if (rec->failed_generation == g_latest_generation && rec->generation != g_latest_generation) --g_failed_at_latest;
    if (rec->unfollowable != FOLLOWED) --g_unfollowable;
    if (rec->device_launch) --g_device_launch;
    free(rec->nodes);
    free(rec);
}

static void set_unfollowable(struct exec_record* rec, uint32_t why) {
    if (rec->unfollowable == FOLLOWED) ++g_unfollowable;
    rec->unfollowable = why;
}

/* A new control generation: every exec that does not carry it is stale again. */
static void adopt_generation(uint64_t generation) {
    g_latest_generation = generation;
    g_current = 0;
    g_failed_at_latest = 0;
    for (size_t i = 0; i < g_execs.capacity; ++i)
        if (g_execs.keys[i] != NULL && ((struct exec_record*)g_execs.values[i])->generation == generation) ++g_current;
    __atomic_store_n(&g_synced_seq, 1u, __ATOMIC_RELAXED);
}

/* Forgets an exec (destroyed, or its address reused by the driver) and releases its graph: a graph the
 * application destroyed while this exec lived is destroyed with its last exec. */
static void drop_exec(struct exec_record* rec) {
    struct graph_record* graph_rec = rec->graph != NULL ? gpupart_table_find(&g_graphs, rec->graph) : NULL;
    forget_exec(rec);
    if (graph_rec == NULL || --graph_rec->live_execs > 0) return;
    gpupart_table_remove(&g_graphs, graph_rec->graph);
    if (graph_rec->held) g_cu.graph_destroy(graph_rec->graph); /* the application's destroy, deferred */
    free(graph_rec);
}

static void on_instantiated(struct gpupart_slot_file* slot, int cbid, void* const* params) {
    void* const* exec_out = (void* const*)params[0];
    void* graph = params[1];
    if (exec_out == NULL || *exec_out == NULL || graph == NULL) return;
    uint64_t flags = 0;
    if (cbid == CB_INSTANTIATE_WITH_FLAGS) flags = (uint64_t)(uintptr_t)params[2];
    if ((cbid == CB_INSTANTIATE_WITH_PARAMS || cbid == CB_INSTANTIATE_WITH_PARAMS_PTSZ) && params[2] != NULL)
        flags = *(const uint64_t*)params[2]; /* CUDA_GRAPH_INSTANTIATE_PARAMS starts with its flags */
    /* An exec the shim still knows at this address was destroyed unseen: forget it first, so that the graph
     * record looked up next is not one that forgetting it frees. */
    struct exec_record* previous = gpupart_table_remove(&g_execs, *exec_out);
    if (previous != NULL) drop_exec(previous);
    struct exec_record* rec = calloc(1, sizeof *rec);
    struct graph_record* graph_rec = gpupart_table_find(&g_graphs, graph);
    if (graph_rec == NULL && (graph_rec = calloc(1, sizeof *graph_rec)) != NULL) {
        graph_rec->graph = graph;
        if (gpupart_table_put(&g_graphs, graph, graph_rec) != 0) {
            free(graph_rec);
            graph_rec = NULL;
        }
    }
    if (rec == NULL || graph_rec == NULL) {
        free(rec);
        gpupart_add64(&slot->counters.errors, 1); /* out of memory: this exec is not followed */
        return;
    }
    struct gpupart_control control; /* the mask its upload will get: not an older one the follower last saw */
    if (gpupart_control_read(&slot->control, &control, 4) == 0 && control.current.generation != g_latest_generation)
        adopt_generation(control.current.generation);
    rec->exec = *exec_out;
    rec->graph = graph;
    rec->generation = g_latest_generation; /* its upload is still to come; a newer mask then gets it anyway */
    rec->device_launch = (flags & INSTANTIATE_FLAG_DEVICE_LAUNCH) != 0;
    size_t capacity = 0;
    collect_nodes(rec, &capacity, graph, 0);
    if (rec->unfollowable != FOLLOWED) ++g_unfollowable;
    if (rec->device_launch) ++g_device_launch;
    ++g_current; /* dated with the newest generation: counted before anything may forget it */
    if (gpupart_table_put(&g_execs, rec->exec, rec) != 0) {
        rec->graph = NULL; /* its graph record does not count it */
        forget_exec(rec);
        gpupart_add64(&slot->counters.errors, 1);
        return;
    }
    ++graph_rec->live_execs;
}

static void on_exec_destroy(void* exec) {
    struct exec_record* rec = gpupart_table_remove(&g_execs, exec);
    if (rec != NULL) drop_exec(rec);
}

/* The application destroys a graph: if execs made from it live on, their node handles must stay valid,
 * so the driver gets an empty graph of ours to destroy instead. */
static void on_graph_destroy(void** graph_argument) {
    struct graph_record* graph_rec = gpupart_table_find(&g_graphs, *graph_argument);
    if (graph_rec == NULL || graph_rec->held) return;
    void* stand_in = NULL;
    if (graph_rec->live_execs > 0 && g_cu.graph_create(&stand_in, 0) == 0 && stand_in != NULL) {
        *graph_argument = stand_in;
        graph_rec->held = 1;
        return;
    }
    for (size_t i = 0; i < g_execs.capacity; ++i) { /* could not keep it: its execs cannot be reached any more */
        struct exec_record* rec = g_execs.values[i];
        if (g_execs.keys[i] != NULL && rec->graph == graph_rec->graph) {
            set_unfollowable(rec, GRAPH_LOST);
            rec->node_count = 0;
            rec->graph = NULL; /* the driver may reuse the address for another graph */
        }
    }
    gpupart_table_remove(&g_graphs, graph_rec->graph);
    free(graph_rec);
}

/* First launch or upload of `exec` since the control block changed: bring it up to date. */
static void on_launch_slow(struct gpupart_slot_file* slot, void* exec) {
    struct gpupart_control control;
    if (gpupart_control_read(&slot->control, &control, 4) != 0) return; /* a write is in progress: next time */
    if (control.current.generation != g_latest_generation) adopt_generation(control.current.generation);
    struct exec_record* rec = gpupart_table_find(&g_execs, exec);
    if (rec == NULL && (rec = calloc(1, sizeof *rec)) != NULL) { /* instantiated where the shim could not see */
        rec->exec = exec;
        if (gpupart_table_put(&g_execs, exec, rec) != 0) {
            free(rec);
            rec = NULL;
        } else {
            set_unfollowable(rec, UNSEEN);
        }
    }
    if (rec != NULL && rec->generation != g_latest_generation && rec->failed_generation != g_latest_generation) {
        int done = 0;
        if (rec->unfollowable == FOLLOWED) {
            done = remask(rec) == 0;
            if (!done) {
                gpupart_add64(&slot->counters.graph_remask_failures, 1);
                set_unfollowable(rec, REMASK_REFUSED);
            }
        } else if (rec->unfollowable == CONDITIONAL_BODIES || rec->unfollowable == REMASK_REFUSED) {
            remask(rec); /* what can be reached still moves; the rest is reported */
        }
        if (done) {
            rec->generation = g_latest_generation;
            ++g_current;
            gpupart_add64(&slot->counters.graph_remasks, 1);
        } else {
            rec->failed_generation = g_latest_generation;
            ++g_failed_at_latest;
        }
    }
    /* Synced when every exec either carries the newest mask or was tried at it: until the next change,
     * launches skip all of this. Execs not launched since the change keep launches on this path. */
    if (g_current + g_failed_at_latest >= g_execs.size) __atomic_store_n(&g_synced_seq, control.seq, __ATOMIC_RELEASE);
}

static int record_usable(const unsigned char* record) {
    uint32_t size;
    const char* name;
    memcpy(&size, record, sizeof size);
    memcpy(&name, record + RECORD_NAME, sizeof name);
    return size >= RECORD_MIN_SIZE && name != NULL && strncmp(name, "cuGraph", 7) == 0;
}

void gpupart_graphs_on_api(struct gpupart_slot_file* slot, int cbid, const void* record_pointer) {
    if (__atomic_load_n(&g_disabled, __ATOMIC_RELAXED) || t_in_shim || record_pointer == NULL) return;
    const int launch = cbid == CB_LAUNCH || cbid == CB_LAUNCH_PTSZ || cbid == CB_UPLOAD || cbid == CB_UPLOAD_PTSZ;
    if (cbid == CB_LAUNCH || cbid == CB_LAUNCH_PTSZ) { /* count graph launches once (the enter site): two loads */
        uint32_t size, site;
        memcpy(&size, record_pointer, sizeof size);
        memcpy(&site, (const unsigned char*)record_pointer + RECORD_SITE, sizeof site);
        if (size >= RECORD_MIN_SIZE && site == SITE_ENTER) {
            gpupart_add64(&slot->counters.graph_launches, 1);
            /* A replay is a launch for "last launch": a process that only replays graphs is not idle. */
            gpupart_store64(&slot->counters.last_launch_realtime_ns, gpupart_coarse_realtime_ns());
        }
    }
    /* The launch path while nothing changed: no lock, no record field beyond those. */
    if (launch && __atomic_load_n(&slot->control.seq, __ATOMIC_ACQUIRE) == __atomic_load_n(&g_synced_seq, __ATOMIC_ACQUIRE))
        return;
    const unsigned char* record = record_pointer;
    if (!record_usable(record)) {
        __atomic_store_n(&g_disabled, 1u, __ATOMIC_RELAXED);
        gpupart_store64(&slot->counters.graph_tracking, GPUPART_GRAPHS_LAYOUT_UNKNOWN);
        return;
    }
    uint32_t site;
    void* const* params;
    int* result;
    memcpy(&site, record + RECORD_SITE, sizeof site);
    memcpy(&params, record + RECORD_PARAMS, sizeof params);
    memcpy(&result, record + RECORD_RESULT, sizeof result);
    const int instantiate = cbid == CB_INSTANTIATE || cbid == CB_INSTANTIATE_V2 || cbid == CB_INSTANTIATE_WITH_FLAGS ||
                            cbid == CB_INSTANTIATE_WITH_PARAMS || cbid == CB_INSTANTIATE_WITH_PARAMS_PTSZ;
    if (params == NULL || (instantiate ? site != SITE_EXIT || result == NULL || *result != 0 : site != SITE_ENTER)) return;
    t_in_shim = 1;
    pthread_mutex_lock(&g_lock);
    if (launch) on_launch_slow(slot, params[0]);
    else if (instantiate) on_instantiated(slot, cbid, params);
    else if (cbid == CB_EXEC_DESTROY) on_exec_destroy(params[0]);
    else if (cbid == CB_GRAPH_DESTROY) on_graph_destroy((void**)params);
    /* A new exec carries the newest generation (on_instantiated adopts a newer one, which resets the sync)
     * and a destroyed one leaves nothing stale, so neither sends later launches down the slow path. */
    publish(slot);
    pthread_mutex_unlock(&g_lock);
    t_in_shim = 0;
}

void gpupart_graphs_setup(void* libcuda, uint32_t handle, gpupart_enable_fn enable, struct gpupart_slot_file* slot) {
    const char* names[] = {"cuGraphGetNodes", "cuGraphNodeGetType", "cuGraphChildGraphNodeGetGraph", "cuGraphNodeGetEnabled",
                           "cuGraphNodeSetEnabled", "cuGraphCreate", "cuGraphDestroy"};
    void* found[7];
    for (int i = 0; i < 7; ++i) {
        found[i] = dlsym(libcuda, names[i]);
        if (found[i] == NULL) {
            fprintf(stderr, "gpupart-shim: this CUDA driver has no %s: CUDA graphs keep the mask of their upload\n", names[i]);
            gpupart_store64(&slot->counters.graph_tracking, GPUPART_GRAPHS_UNAVAILABLE);
            return;
        }
    }
    memcpy(&g_cu.get_nodes, &found[0], sizeof(void*)); /* ISO C has no object-to-function cast: copy the bits */
    memcpy(&g_cu.node_type, &found[1], sizeof(void*));
    memcpy(&g_cu.child_graph, &found[2], sizeof(void*));
    memcpy(&g_cu.get_enabled, &found[3], sizeof(void*));
    memcpy(&g_cu.set_enabled, &found[4], sizeof(void*));
    memcpy(&g_cu.graph_create, &found[5], sizeof(void*));
    memcpy(&g_cu.graph_destroy, &found[6], sizeof(void*));
    for (size_t i = 0; i < sizeof kFollowedCallbacks / sizeof kFollowedCallbacks[0]; ++i)
        if (enable(1, handle, GPUPART_DOMAIN_DRIVER_API, kFollowedCallbacks[i]) != 0) {
            fprintf(stderr, "gpupart-shim: CUDA refused the graph-call callback %d: CUDA graphs keep the mask of their upload\n",
                    kFollowedCallbacks[i]);
            for (size_t k = 0; k < i; ++k) enable(0, handle, GPUPART_DOMAIN_DRIVER_API, kFollowedCallbacks[k]);
            gpupart_store64(&slot->counters.graph_tracking, GPUPART_GRAPHS_UNAVAILABLE);
            return;
        }
    gpupart_store64(&slot->counters.graph_tracking, GPUPART_GRAPHS_FOLLOWED);
}

void gpupart_graphs_after_fork(void) {
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&g_lock, &fresh, sizeof fresh);
}
