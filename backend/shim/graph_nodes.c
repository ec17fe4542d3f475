/*
 * The driver calls the CUDA-graph follower makes (graph_nodes.h). Measured on the H100/H200, driver 580
 * (docs/cuda-graphs.md): turning a kernel node off and on again through the exec makes the driver rebuild
 * its descriptor at the exec's next launch or upload, with the launch callback running; an upload made on
 * another stream before the replay leaves that replay at its steady cost.
 */
#define _GNU_SOURCE
#include "graph_nodes.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODE_TYPE_KERNEL 0
#define NODE_TYPE_GRAPH 4
#define NODE_TYPE_CONDITIONAL 13
#define MAX_CHILD_DEPTH 16
#define STREAM_NON_BLOCKING 1u
#define MAX_CONTEXTS 16

typedef int (*get_nodes_fn)(void* graph, void** nodes, size_t* count);
typedef int (*node_type_fn)(void* node, int* type);
typedef int (*child_graph_fn)(void* node, void** graph);
typedef int (*get_enabled_fn)(void* exec, void* node, unsigned* enabled);
typedef int (*set_enabled_fn)(void* exec, void* node, unsigned enabled);
typedef int (*graph_create_fn)(void** graph, unsigned flags);
typedef int (*graph_destroy_fn)(void* graph);
typedef int (*upload_fn)(void* exec, void* stream);
typedef int (*ctx_get_fn)(void** context);
typedef int (*ctx_set_fn)(void* context);
typedef int (*stream_create_fn)(void** stream, unsigned flags);
typedef int (*capture_mode_fn)(int* mode);
static struct {
    get_nodes_fn get_nodes;
    node_type_fn node_type;
    child_graph_fn child_graph;
    get_enabled_fn get_enabled;
    set_enabled_fn set_enabled;
    graph_create_fn graph_create;
    graph_destroy_fn graph_destroy;
    upload_fn upload;
    ctx_get_fn ctx_get;
    ctx_set_fn ctx_set;
    stream_create_fn stream_create;
    capture_mode_fn exchange_capture_mode;
} g_cu;

/* The re-mask thread's stream in each context it uploaded in (only that thread touches this). */
static struct {
    void* context;
    void* stream;
} g_streams[MAX_CONTEXTS];

int gpupart_graph_nodes_resolve(void* libcuda) {
    static const char* const required[] = {"cuGraphGetNodes", "cuGraphNodeGetType", "cuGraphChildGraphNodeGetGraph",
                                           "cuGraphNodeGetEnabled", "cuGraphNodeSetEnabled", "cuGraphCreate",
                                           "cuGraphDestroy"};
    void* found[7];
    for (int i = 0; i < 7; ++i) {
        found[i] = dlsym(libcuda, required[i]);
        if (found[i] == NULL) {
            fprintf(stderr, "gpupart-shim: this CUDA driver has no %s: CUDA graphs keep the mask of their upload\n", required[i]);
            return -1;
        }
    }
    memcpy(&g_cu.get_nodes, &found[0], sizeof(void*)); /* ISO C has no object-to-function cast: copy the bits */
    memcpy(&g_cu.node_type, &found[1], sizeof(void*));
    memcpy(&g_cu.child_graph, &found[2], sizeof(void*));
    memcpy(&g_cu.get_enabled, &found[3], sizeof(void*));
    memcpy(&g_cu.set_enabled, &found[4], sizeof(void*));
    memcpy(&g_cu.graph_create, &found[5], sizeof(void*));
    memcpy(&g_cu.graph_destroy, &found[6], sizeof(void*));
    /* Optional: the thread that re-masks execs ahead of their replay needs these four. */
    void* upload = dlsym(libcuda, "cuGraphUpload");
    void* ctx_get = dlsym(libcuda, "cuCtxGetCurrent");
    void* ctx_set = dlsym(libcuda, "cuCtxSetCurrent");
    void* stream_create = dlsym(libcuda, "cuStreamCreate");
    if (upload != NULL && ctx_get != NULL && ctx_set != NULL && stream_create != NULL) {
        memcpy(&g_cu.upload, &upload, sizeof(void*));
        memcpy(&g_cu.ctx_get, &ctx_get, sizeof(void*));
        memcpy(&g_cu.ctx_set, &ctx_set, sizeof(void*));
        memcpy(&g_cu.stream_create, &stream_create, sizeof(void*));
    }
    void* exchange = dlsym(libcuda, "cuThreadExchangeStreamCaptureMode");
    if (exchange != NULL) memcpy(&g_cu.exchange_capture_mode, &exchange, sizeof(void*));
    return 0;
}

int gpupart_graph_can_upload(void) { return g_cu.upload != NULL; }

/* Appends one kernel node, growing the array geometrically. 0, or -1 when out of memory. */
static int push_node(void*** nodes, size_t* count, size_t* capacity, void* node) {
    if (*count == *capacity) {
        const size_t grown_capacity = *capacity ? *capacity * 2 : 16;
        void** grown = realloc(*nodes, grown_capacity * sizeof(void*));
        if (grown == NULL) return -1;
        *nodes = grown;
        *capacity = grown_capacity;
    }
    (*nodes)[(*count)++] = node;
    return 0;
}

static enum gpupart_graph_reach collect(void* graph, void*** out, size_t* count, size_t* capacity, int depth) {
    size_t here = 0;
    if (depth > MAX_CHILD_DEPTH || g_cu.get_nodes(graph, NULL, &here) != 0) return NODES_UNREADABLE;
    if (here == 0) return FOLLOWED;
    void** nodes = calloc(here, sizeof(void*)); /* this level's own list: children append to *out */
    if (nodes == NULL || g_cu.get_nodes(graph, nodes, &here) != 0) {
        free(nodes);
        return NODES_UNREADABLE;
    }
    enum gpupart_graph_reach reach = FOLLOWED;
    for (size_t i = 0; i < here; ++i) {
        int type = -1;
        void* child = NULL;
        if (g_cu.node_type(nodes[i], &type) != 0) {
            reach = NODES_UNREADABLE;
        } else if (type == NODE_TYPE_KERNEL) {
            if (push_node(out, count, capacity, nodes[i]) != 0) reach = NODES_UNREADABLE;
        } else if (type == NODE_TYPE_GRAPH) {
            enum gpupart_graph_reach inner = NODES_UNREADABLE;
            if (g_cu.child_graph(nodes[i], &child) == 0) inner = collect(child, out, count, capacity, depth + 1);
            if (inner != FOLLOWED && (reach == FOLLOWED || inner == NODES_UNREADABLE)) reach = inner;
        } else if (type == NODE_TYPE_CONDITIONAL && reach == FOLLOWED) {
            reach = CONDITIONAL_BODIES; /* the driver offers no way to read a body graph back */
        }
    }
    free(nodes);
    return reach;
}

enum gpupart_graph_reach gpupart_graph_collect(void* graph, void*** nodes, size_t* count, size_t* capacity) {
    return collect(graph, nodes, count, capacity, 0);
}

int gpupart_graph_toggle(void* exec, void* const* nodes, size_t count) {
    int failed = 0;
    for (size_t i = 0; i < count; ++i) {
        unsigned enabled = 0;
        if (g_cu.get_enabled(exec, nodes[i], &enabled) != 0) {
            failed = 1;
            continue;
        }
        if (!enabled) continue; /* the application disabled it: leave it so */
        if (g_cu.set_enabled(exec, nodes[i], 0) != 0) {
            failed = 1;
            continue;
        }
        /* Never leave a node off that the application had on: retry once, then count it as an error. */
        if (g_cu.set_enabled(exec, nodes[i], 1) != 0 && g_cu.set_enabled(exec, nodes[i], 1) != 0) failed = 1;
    }
    return failed;
}

void* gpupart_graph_current_context(void) {
    void* context = NULL;
    if (g_cu.ctx_get == NULL || g_cu.ctx_get(&context) != 0) return NULL;
    return context;
}

/* The re-mask thread's stream in `context` (current on the calling thread), made at its first use. */
static void* stream_in(void* context) {
    for (int i = 0; i < MAX_CONTEXTS; ++i)
        if (g_streams[i].context == context) return g_streams[i].stream;
    for (int i = 0; i < MAX_CONTEXTS; ++i) {
        if (g_streams[i].context != NULL) continue;
        void* stream = NULL;
        if (g_cu.stream_create(&stream, STREAM_NON_BLOCKING) != 0 || stream == NULL) return NULL;
        g_streams[i].context = context;
        g_streams[i].stream = stream;
        return stream;
    }
    return NULL; /* more contexts than places: the application's next launch rebuilds instead */
}

int gpupart_graph_upload(void* context, void* exec) {
    if (g_cu.upload == NULL || context == NULL) return -1;
    const int set = g_cu.ctx_set(context);
    if (set != 0) return set;
    void* stream = stream_in(context);
    return stream != NULL ? g_cu.upload(exec, stream) : -1;
}

#define CAPTURE_MODE_RELAXED 2 /* CU_STREAM_CAPTURE_MODE_RELAXED */

void gpupart_graph_relax_capture(void) {
    int mode = CAPTURE_MODE_RELAXED;
    if (g_cu.exchange_capture_mode != NULL) g_cu.exchange_capture_mode(&mode);
}

void gpupart_graph_forget_streams(void) { memset(g_streams, 0, sizeof g_streams); }

int gpupart_graph_create_stand_in(void** graph) { return g_cu.graph_create(graph, 0); }

int gpupart_graph_destroy(void* graph) { return g_cu.graph_destroy(graph); }
