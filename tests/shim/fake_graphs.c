/*
 * TEST DOUBLE of the CUDA driver, part 2: CUDA graphs, for the shim's graph follower
 * (backend/shim/gpupart_shim_graphs.c). Never installed, never used outside tests/shim.
 *
 * It models what docs/cuda-graphs.md measured on the real driver (580), no more:
 *  - an exec's kernel descriptors are built at its first launch and never again, except that a kernel
 *    node turned off and on again (cuGraphNodeSetEnabled through the exec) is rebuilt at the next launch;
 *    each build runs the descriptor callback, and the fake keeps the mask it got per node;
 *  - an upload (cuGraphUpload) builds what the next launch would, so that launch builds nothing;
 *  - the graph calls the shim follows call the subscribed callback at enter and exit, if it enabled their
 *    driver-API cbid, with the record layout measured (fake_cuda_api_record); and the call then uses
 *    its parameters as the callback left them (cuGraphDestroy destroys whatever graph the callback put there);
 *  - node handles of a destroyed graph are refused by the exec calls; a child graph node embeds a copy
 *    of its child graph whose kernels the exec contains; a conditional node's body cannot be read back.
 * Handles point into fixed pools and are never reused, so a stale handle is always seen as stale, and
 * nothing is allocated (nothing for LeakSanitizer to report under the asan preset).
 * Real names and C signatures (0 = CUDA_SUCCESS, 1 = CUDA_ERROR_INVALID_VALUE) for the calls that exist;
 * fake_graph_* for what the test needs besides: building graphs, reading what each kernel will run with.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fake_libcuda.h"

#define EXPORT __attribute__((visibility("default")))

#define OK 0
#define INVALID_VALUE 1
#define NOT_YET FAKE_CUDA_NOT_YET
#define SITE_ENTER FAKE_CUDA_SITE_ENTER
#define SITE_EXIT FAKE_CUDA_SITE_EXIT

#define NODE_KERNEL 0
#define NODE_GRAPH 4
#define NODE_CONDITIONAL 13

/* CUPTI's driver-API cbids, as the shim follows them. */
#define CB_LAUNCH 514
#define CB_EXEC_DESTROY 516
#define CB_GRAPH_DESTROY 517
#define CB_INSTANTIATE_WITH_FLAGS 643
#define CB_UPLOAD 580
#define CB_NODE_SET_ENABLED 650


#define V04 0x40                /* graphs' kernels are built with Hopper's descriptor */
#define V04_MASK_OFFSET 304
#define V04_ENABLE_BIT 0x80000000u

#define MAX_GRAPHS 64
#define MAX_NODES 256
#define MAX_GRAPH_NODES 16
#define MAX_EXECS 32
#define MAX_EXEC_KERNELS 32

struct graph;
struct node {
    struct graph* graph;        /* the graph it belongs to */
    int type;
    struct graph* body;         /* child graph node: its copy of the child graph; conditional: its body */
};
struct graph {
    int alive;
    struct graph* owner;        /* the graph whose node embeds this one; NULL for a graph of the application */
    size_t count;
    struct node* nodes[MAX_GRAPH_NODES];
};
struct kernel {                 /* a kernel node as an exec holds it */
    struct node* node;
    unsigned enabled;
    int dirty;                  /* turned on again since its descriptor was built: rebuilt at the next launch */
    uint32_t allowed_low;       /* low 32 bits of the mask its descriptor carries; 0 = not built or unmasked */
};
struct exec {
    int alive;
    int busy;                   /* a call on it is in progress (atomic): two at once are counted in g_overlaps */
    int uploaded;
    unsigned rebuilt;           /* descriptors built by its last launch */
    size_t count;
    struct kernel kernels[MAX_EXEC_KERNELS];
};

static struct graph g_graphs[MAX_GRAPHS];
static struct node g_nodes[MAX_NODES];
static struct exec g_execs[MAX_EXECS];
static size_t g_graphs_used, g_nodes_used, g_execs_used;
/* Calls that were inside the same exec at once. The real driver does not lock an exec against concurrent
 * calls; the shim's re-mask thread must never be in one while the application is. */
static unsigned g_overlaps;

static void exec_enter(struct exec* e) {
    if (e != NULL && __atomic_exchange_n(&e->busy, 1, __ATOMIC_ACQUIRE)) __atomic_add_fetch(&g_overlaps, 1u, __ATOMIC_RELAXED);
}
static void exec_leave(struct exec* e) {
    if (e != NULL) __atomic_store_n(&e->busy, 0, __ATOMIC_RELEASE);
}

/* A handle the test or the shim passes in, if it names a live object of the pool. */
static void* pool_entry(void* pool, size_t element, size_t used, const void* handle) {
    const uintptr_t offset = (uintptr_t)handle - (uintptr_t)pool;
    if (handle == NULL || (uintptr_t)handle < (uintptr_t)pool || offset % element != 0 || offset / element >= used) return NULL;
    return (char*)pool + offset;
}
static struct graph* graph_of(const void* handle) {
    struct graph* g = pool_entry(g_graphs, sizeof g_graphs[0], g_graphs_used, handle);
    return g != NULL && g->alive ? g : NULL;
}
static struct node* node_of(const void* handle) {
    struct node* n = pool_entry(g_nodes, sizeof g_nodes[0], g_nodes_used, handle);
    return n != NULL && n->graph->alive ? n : NULL; /* a node of a destroyed graph is refused */
}
static struct exec* exec_of(const void* handle) {
    struct exec* e = pool_entry(g_execs, sizeof g_execs[0], g_execs_used, handle);
    return e != NULL && e->alive ? e : NULL;
}
static struct kernel* kernel_of(struct exec* e, const struct node* n) {
    for (size_t i = 0; i < e->count; ++i)
        if (e->kernels[i].node == n) return &e->kernels[i];
    return NULL;
}

static struct graph* new_graph(struct graph* owner) {
    if (g_graphs_used == MAX_GRAPHS) return NULL;
    struct graph* g = &g_graphs[g_graphs_used++];
    g->alive = 1;
    g->owner = owner;
    return g;
}

static struct node* new_node(struct graph* g, int type, struct graph* body) {
    if (g == NULL || g->count == MAX_GRAPH_NODES || g_nodes_used == MAX_NODES) return NULL;
    struct node* n = &g_nodes[g_nodes_used++];
    n->graph = g;
    n->type = type;
    n->body = body;
    g->nodes[g->count++] = n;
    return n;
}

static void destroy_graph(struct graph* g) { /* with the graphs its nodes embed */
    g->alive = 0;
    for (size_t i = 0; i < g->count; ++i)
        if (g->nodes[i]->body != NULL) destroy_graph(g->nodes[i]->body);
}

/* Copies the nodes of `from` into `to` (an embedded graph), as cuGraphAddChildGraphNode copies a child. */
static int copy_nodes(struct graph* to, const struct graph* from) {
    for (size_t i = 0; i < from->count; ++i) {
        struct graph* body = NULL;
        if (from->nodes[i]->body != NULL &&
            ((body = new_graph(to)) == NULL || copy_nodes(body, from->nodes[i]->body) != 0))
            return -1;
        if (new_node(to, from->nodes[i]->type, body) == NULL) return -1;
    }
    return 0;
}

/* The kernels an exec of `g` runs: its own, those of child graphs and those of conditional bodies. */
static int add_kernels(struct exec* e, const struct graph* g) {
    for (size_t i = 0; i < g->count; ++i) {
        struct node* n = g->nodes[i];
        if (n->body != NULL && add_kernels(e, n->body) != 0) return -1;
        if (n->type != NODE_KERNEL) continue;
        if (e->count == MAX_EXEC_KERNELS) return -1;
        e->kernels[e->count++] = (struct kernel){n, 1u, 0, 0u};
    }
    return 0;
}

static void api_callback(int cbid, const char* name, void* params, int* result, uint32_t site) {
    fake_cuda_api_record(cbid, name, params, result, site);
}

/* ---- The driver's graph API (what the shim resolves, and what the application calls) --------------- */

EXPORT int cuGraphCreate(void** graph, unsigned flags) {
    struct graph* g = graph != NULL && flags == 0 ? new_graph(NULL) : NULL;
    if (g == NULL) return INVALID_VALUE;
    *graph = g;
    return OK;
}

EXPORT int cuGraphDestroy(void* graph) {
    struct {
        void* graph;
    } params = {graph};
    int result = NOT_YET;
    api_callback(CB_GRAPH_DESTROY, "cuGraphDestroy", &params, &result, SITE_ENTER);
    struct graph* g = graph_of(params.graph); /* what the callback left there */
    result = g != NULL && g->owner == NULL ? OK : INVALID_VALUE;
    if (result == OK) destroy_graph(g);
    api_callback(CB_GRAPH_DESTROY, "cuGraphDestroy", &params, &result, SITE_EXIT);
    return result;
}

EXPORT int cuGraphGetNodes(void* graph, void** nodes, size_t* count) {
    const struct graph* g = graph_of(graph);
    if (g == NULL || count == NULL) return INVALID_VALUE;
    if (nodes != NULL)
        for (size_t i = 0; i < *count && i < g->count; ++i) nodes[i] = g->nodes[i];
    if (nodes == NULL || *count > g->count) *count = g->count;
    return OK;
}

EXPORT int cuGraphNodeGetType(void* node, int* type) {
    const struct node* n = node_of(node);
    if (n == NULL || type == NULL) return INVALID_VALUE;
    *type = n->type;
    return OK;
}

/* Child graph nodes only: a conditional node's body cannot be read back. */
EXPORT int cuGraphChildGraphNodeGetGraph(void* node, void** graph) {
    const struct node* n = node_of(node);
    if (n == NULL || n->type != NODE_GRAPH || graph == NULL) return INVALID_VALUE;
    *graph = n->body;
    return OK;
}

EXPORT int cuGraphNodeGetEnabled(void* exec, void* node, unsigned* enabled) {
    struct exec* e = exec_of(exec);
    const struct node* n = node_of(node);
    const struct kernel* k = e != NULL && n != NULL ? kernel_of(e, n) : NULL;
    if (k == NULL || enabled == NULL) return INVALID_VALUE;
    *enabled = k->enabled;
    return OK;
}

EXPORT int cuGraphNodeSetEnabled(void* exec, void* node, unsigned enabled) {
    struct {
        void* exec;
        void* node;
        unsigned enabled;
    } params = {exec, node, enabled};
    int result = NOT_YET;
    api_callback(CB_NODE_SET_ENABLED, "cuGraphNodeSetEnabled", &params, &result, SITE_ENTER);
    struct exec* e = exec_of(exec);
    const struct node* n = node_of(node);
    exec_enter(e);
    struct kernel* k = e != NULL && n != NULL ? kernel_of(e, n) : NULL;
    result = k != NULL ? OK : INVALID_VALUE;
    if (k != NULL) {
        if (enabled && !k->enabled) k->dirty = 1; /* off and on again: rebuilt at the next launch */
        k->enabled = enabled != 0;
    }
    exec_leave(e);
    api_callback(CB_NODE_SET_ENABLED, "cuGraphNodeSetEnabled", &params, &result, SITE_EXIT);
    return result;
}

EXPORT int cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long flags) {
    struct {
        void** exec;
        void* graph;
        unsigned long long flags;
    } params = {exec, graph, flags};
    int result = NOT_YET;
    api_callback(CB_INSTANTIATE_WITH_FLAGS, "cuGraphInstantiateWithFlags", &params, &result, SITE_ENTER);
    const struct graph* g = graph_of(params.graph);
    struct exec* e = g != NULL && params.exec != NULL && g_execs_used < MAX_EXECS ? &g_execs[g_execs_used++] : NULL;
    result = e != NULL && add_kernels(e, g) == 0 ? OK : INVALID_VALUE;
    if (result == OK) {
        e->alive = 1;
        *params.exec = e;
    }
    api_callback(CB_INSTANTIATE_WITH_FLAGS, "cuGraphInstantiateWithFlags", &params, &result, SITE_EXIT);
    return result;
}

/* Builds every enabled kernel's descriptor at the first launch or upload; later only those turned on again. */
static void build_descriptors(struct exec* e) {
    e->rebuilt = 0;
    for (size_t i = 0; i < e->count; ++i) {
        struct kernel* k = &e->kernels[i];
        if (!k->enabled || (e->uploaded && !k->dirty)) continue;
        unsigned char descriptor[FAKE_CUDA_DESCRIPTOR_BYTES];
        fake_cuda_build_descriptor(V04, descriptor);
        uint32_t word0, disable;
        memcpy(&word0, descriptor, sizeof word0);
        memcpy(&disable, descriptor + V04_MASK_OFFSET, sizeof disable);
        k->allowed_low = (word0 & V04_ENABLE_BIT) != 0 ? ~disable : 0u;
        k->dirty = 0;
        ++e->rebuilt;
    }
    e->uploaded = 1;
}

/* cuGraphLaunch and cuGraphUpload: the same parameters and the same descriptor builds. */
static int launch_or_upload(int cbid, const char* name, void* exec, void* stream) {
    struct {
        void* exec;
        void* stream;
    } params = {exec, stream};
    int result = NOT_YET;
    api_callback(cbid, name, &params, &result, SITE_ENTER);
    struct exec* e = exec_of(params.exec);
    result = e != NULL && fake_cuda_stream_valid(params.stream) ? OK : INVALID_VALUE;
    exec_enter(e);
    if (result == OK) build_descriptors(e);
    exec_leave(e);
    api_callback(cbid, name, &params, &result, SITE_EXIT);
    return result;
}

EXPORT int cuGraphLaunch(void* exec, void* stream) { return launch_or_upload(CB_LAUNCH, "cuGraphLaunch", exec, stream); }

EXPORT int cuGraphUpload(void* exec, void* stream) { return launch_or_upload(CB_UPLOAD, "cuGraphUpload", exec, stream); }

EXPORT int cuGraphExecDestroy(void* exec) {
    struct {
        void* exec;
    } params = {exec};
    int result = NOT_YET;
    api_callback(CB_EXEC_DESTROY, "cuGraphExecDestroy", &params, &result, SITE_ENTER);
    struct exec* e = exec_of(params.exec);
    result = e != NULL ? OK : INVALID_VALUE;
    if (e != NULL) e->alive = 0;
    api_callback(CB_EXEC_DESTROY, "cuGraphExecDestroy", &params, &result, SITE_EXIT);
    return result;
}

/* ---- Test-only helpers --------------------------------------------------------------------------- */

/* Adds a kernel node to `graph`; NULL if the graph is not live. */
EXPORT void* fake_graph_add_kernel(void* graph) { return new_node(graph_of(graph), NODE_KERNEL, NULL); }

/* Adds a child graph node embedding a copy of `child` (as cuGraphAddChildGraphNode does). */
EXPORT void* fake_graph_add_child(void* graph, void* child) {
    struct graph* g = graph_of(graph);
    const struct graph* c = graph_of(child);
    struct graph* copy = g != NULL && c != NULL ? new_graph(g) : NULL;
    return copy != NULL && copy_nodes(copy, c) == 0 ? new_node(g, NODE_GRAPH, copy) : NULL;
}

/* Adds a conditional node whose body holds one kernel. */
EXPORT void* fake_graph_add_conditional(void* graph) {
    struct graph* g = graph_of(graph);
    struct graph* body = g != NULL ? new_graph(g) : NULL;
    return body != NULL && new_node(body, NODE_KERNEL, NULL) != NULL ? new_node(g, NODE_CONDITIONAL, body) : NULL;
}

/* What each kernel of `exec` runs with now, in graph order: the low 32 bits of its descriptor's allowed
 * TPCs (the complement of the disable mask), 0 when its descriptor carries no mask or was never built.
 * Returns the number of kernels (at most `capacity` written), -1 for a dead exec; `rebuilt`: how many
 * descriptors its last launch built. */
EXPORT int fake_graph_exec_masks(void* exec, uint32_t* allowed_low, size_t capacity, unsigned* rebuilt) {
    const struct exec* e = exec_of(exec);
    if (e == NULL) return -1;
    for (size_t i = 0; i < e->count && i < capacity; ++i) allowed_low[i] = e->kernels[i].allowed_low;
    if (rebuilt != NULL) *rebuilt = e->rebuilt;
    return (int)e->count;
}

/* Graphs of the application not destroyed yet (by it, or by the shim on its behalf). */
EXPORT int fake_graph_live_count(void) {
    int live = 0;
    for (size_t i = 0; i < g_graphs_used; ++i) live += g_graphs[i].alive && g_graphs[i].owner == NULL;
    return live;
}

/* How many times two calls were inside one exec at once (see g_overlaps). */
EXPORT unsigned fake_graph_overlaps(void) { return __atomic_load_n(&g_overlaps, __ATOMIC_RELAXED); }
