/*
 * A stand-in CUDA application for shim_end_to_end.sh: it never links CUDA, it dlopen()s the TEST DOUBLE
 * driver (fake_libcuda.c) the way CUDA runtimes do, and "launches kernels" through fake_cuda_launch, so
 * that the real libgpupart-shim.so, preloaded, sees real dlopen calls and real launch callbacks.
 *
 *   shim_host STEP...   performed in order, one line per step on stdout (flushed):
 *     load:PATH      dlopen(PATH, RTLD_NOW), resolve fake_cuda_launch        -> "loaded"
 *     launch:VERSION one launch of a descriptor with that version byte (hex)  -> "launch version=0x40
 *                    callback=1 word0=0x... mask=0x...,0x...,0x...,0x... low=0x...,0x..." (the first u32,
 *                    the four u32 at byte 304, the two u32 at byte 84)
 *   CUDA graphs, through the test double's graph API (fake_graphs.c); graph I is the I-th graph made here
 *   (from 0), each instantiated once into exec I:
 *     graph:K        a graph of K kernel nodes                                -> "graph I instantiated kernels=K"
 *     devgraph:K     the same, instantiated for device launch                 -> "... kernels=K device-launch"
 *     graphchild     a child graph node (holding one kernel), then a kernel;  -> "... kernels=2"
 *                    the child graph is destroyed once embedded (the node holds a copy)
 *     graphcond      a kernel, then a conditional node whose body holds one   -> "... kernels=2"
 *     graphlaunch:I  cuGraphLaunch(exec I)  -> "graph I launch rebuilt=N masks=0x0000000f,none" (descriptors
 *                    that launch built; per kernel, the low 32 bits of the TPCs its descriptor allows,
 *                    "none" when it carries no mask)
 *     graphmasks:I   the same masks without a launch: what exec I's descriptors carry now -> "graph I masks=..."
 *     graphdestroy:I cuGraphDestroy(graph I), as PyTorch does while the exec lives -> "graph I destroyed"
 *     execdestroy:I  cuGraphExecDestroy(exec I)                               -> "exec I destroyed"
 *     graphcount     graphs not destroyed yet (the application's)             -> "graphs live=N"
 *   and:
 *     device:N       make ordinal N current in this thread (fake_cuda_set_device) -> "device N"
 *     thread:STEPS   run STEPS (joined by '+', e.g. thread:device:1+launch:40) in a new thread and join
 *                    it; its lines are printed as usual
 *     ready:FILE     create FILE                                              -> "ready"
 *     wait:FILE      poll every 10 ms until FILE exists (exit 2 after 20 s)   -> "resumed"
 *     pid            -> "pid <pid>"
 * Exit status: 0, 1 for a bad step, a failed load or a failed graph call, 2 when a wait gives up.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host_steps.h"

#define DESCRIPTOR_BYTES 512
#define V04_MASK_OFFSET 304
#define V01_MASK_OFFSET 84
#define MAX_GRAPHS 16
#define MAX_KERNELS 32
#define INSTANTIATE_FLAG_DEVICE_LAUNCH 4ull

typedef int (*launch_fn)(unsigned version, unsigned char* descriptor);

/* The test double's graph API: the driver's names where the call exists, fake_graph_* for the rest. */
static struct {
    int (*create)(void** graph, unsigned flags);
    int (*destroy)(void* graph);
    int (*instantiate)(void** exec, void* graph, unsigned long long flags);
    int (*launch)(void* exec, void* stream);
    int (*exec_destroy)(void* exec);
    void* (*add_kernel)(void* graph);
    void* (*add_child)(void* graph, void* child);
    void* (*add_conditional)(void* graph);
    int (*exec_masks)(void* exec, uint32_t* allowed_low, size_t capacity, unsigned* rebuilt);
    int (*live_count)(void);
} g_api;
static int g_api_found;
static void* g_graphs[MAX_GRAPHS];
static void* g_execs[MAX_GRAPHS];
static int g_graph_count;

/* ISO C has no conversion between object and function pointers: copy the bits. */
#define RESOLVE(library, field, name)                                  \
    do {                                                               \
        void* symbol_ = dlsym((library), (name));                      \
        if (symbol_ == NULL) g_api_found = 0;                          \
        memcpy(&g_api.field, &symbol_, sizeof g_api.field);            \
    } while (0)

/* Optional: the plain launch steps work with a driver that has no graph API. */
static void resolve_graph_api(void* library) {
    g_api_found = 1;
    RESOLVE(library, create, "cuGraphCreate");
    RESOLVE(library, destroy, "cuGraphDestroy");
    RESOLVE(library, instantiate, "cuGraphInstantiateWithFlags");
    RESOLVE(library, launch, "cuGraphLaunch");
    RESOLVE(library, exec_destroy, "cuGraphExecDestroy");
    RESOLVE(library, add_kernel, "fake_graph_add_kernel");
    RESOLVE(library, add_child, "fake_graph_add_child");
    RESOLVE(library, add_conditional, "fake_graph_add_conditional");
    RESOLVE(library, exec_masks, "fake_graph_exec_masks");
    RESOLVE(library, live_count, "fake_graph_live_count");
}

static uint32_t u32_at(const unsigned char* bytes, size_t offset) {
    uint32_t value;
    memcpy(&value, bytes + offset, sizeof value);
    return value;
}

/* The graph index of STEP's argument after `prefix`, or -1 (after saying why) when there is no such graph. */
static int graph_index(const char* step, const char* prefix) {
    char* end = NULL;
    errno = 0;
    const long index = strtol(step + strlen(prefix), &end, 10);
    if (errno != 0 || end == step + strlen(prefix) || *end != '\0' || index < 0 || index >= g_graph_count) {
        fprintf(stderr, "shim_host: bad step %s (no such graph)\n", step);
        return -1;
    }
    return (int)index;
}

static int failed(const char* step, const char* call, int result) {
    fprintf(stderr, "shim_host: %s: %s failed (%d)\n", step, call, result);
    return 1;
}

/* graph:K, devgraph:K, graphchild, graphcond: makes graph I and instantiates it into exec I. */
static int make_graph(const char* step) {
    const int device = starts_with(step, "devgraph:");
    const char* count = starts_with(step, "graph:") ? step + 6 : device ? step + 9 : NULL;
    long kernels = 2; /* graphchild, graphcond */
    if (count != NULL) {
        char* end = NULL;
        errno = 0;
        kernels = strtol(count, &end, 10);
        if (errno != 0 || end == count || *end != '\0' || kernels < 1 || kernels > MAX_KERNELS) {
            fprintf(stderr, "shim_host: bad step %s (1 to %d kernels)\n", step, MAX_KERNELS);
            return 1;
        }
    } else if (strcmp(step, "graphchild") != 0 && strcmp(step, "graphcond") != 0) {
        fprintf(stderr, "shim_host: unknown step %s\n", step);
        return 1;
    }
    if (g_graph_count == MAX_GRAPHS) {
        fprintf(stderr, "shim_host: %s: at most %d graphs\n", step, MAX_GRAPHS);
        return 1;
    }
    void* graph = NULL;
    int result = g_api.create(&graph, 0);
    if (result != 0) return failed(step, "cuGraphCreate", result);
    if (count != NULL) {
        for (long k = 0; k < kernels; ++k)
            if (g_api.add_kernel(graph) == NULL) return failed(step, "fake_graph_add_kernel", 0);
    } else if (strcmp(step, "graphchild") == 0) {
        void* child = NULL;
        if ((result = g_api.create(&child, 0)) != 0) return failed(step, "cuGraphCreate", result);
        if (g_api.add_kernel(child) == NULL || g_api.add_child(graph, child) == NULL || g_api.add_kernel(graph) == NULL)
            return failed(step, "fake_graph_add_*", 0);
        if ((result = g_api.destroy(child)) != 0) return failed(step, "cuGraphDestroy", result);
    } else if (g_api.add_kernel(graph) == NULL || g_api.add_conditional(graph) == NULL) {
        return failed(step, "fake_graph_add_*", 0);
    }
    void* exec = NULL;
    result = g_api.instantiate(&exec, graph, device ? INSTANTIATE_FLAG_DEVICE_LAUNCH : 0);
    if (result != 0) return failed(step, "cuGraphInstantiateWithFlags", result);
    g_graphs[g_graph_count] = graph;
    g_execs[g_graph_count] = exec;
    printf("graph %d instantiated kernels=%ld%s\n", g_graph_count++, kernels, device ? " device-launch" : "");
    return 0;
}

/* The graph steps (see the top of this file); 0 when done, else the exit status. */
static int graph_step(const char* step) {
    if (!g_api_found) {
        fprintf(stderr, "shim_host: %s: the loaded driver has no graph API (load: comes first)\n", step);
        return 1;
    }
    int index;
    int result;
    if (strcmp(step, "graphcount") == 0) {
        printf("graphs live=%d\n", g_api.live_count());
    } else if (starts_with(step, "graphlaunch:") || starts_with(step, "graphmasks:")) {
        const int launch = starts_with(step, "graphlaunch:");
        if ((index = graph_index(step, launch ? "graphlaunch:" : "graphmasks:")) < 0) return 1;
        if (launch && (result = g_api.launch(g_execs[index], NULL)) != 0) return failed(step, "cuGraphLaunch", result);
        uint32_t allowed[MAX_KERNELS];
        unsigned rebuilt = 0;
        const int kernels = g_api.exec_masks(g_execs[index], allowed, MAX_KERNELS, &rebuilt);
        if (kernels < 0 || kernels > MAX_KERNELS) return failed(step, "fake_graph_exec_masks", kernels);
        if (launch) printf("graph %d launch rebuilt=%u masks=", index, rebuilt);
        else printf("graph %d masks=", index);
        for (int k = 0; k < kernels; ++k) {
            if (allowed[k] == 0) printf("%snone", k ? "," : "");
            else printf("%s0x%08x", k ? "," : "", allowed[k]);
        }
        printf("\n");
    } else if (starts_with(step, "graphdestroy:")) {
        if ((index = graph_index(step, "graphdestroy:")) < 0) return 1;
        if ((result = g_api.destroy(g_graphs[index])) != 0) return failed(step, "cuGraphDestroy", result);
        printf("graph %d destroyed\n", index);
    } else if (starts_with(step, "execdestroy:")) {
        if ((index = graph_index(step, "execdestroy:")) < 0) return 1;
        if ((result = g_api.exec_destroy(g_execs[index])) != 0) return failed(step, "cuGraphExecDestroy", result);
        printf("exec %d destroyed\n", index);
    } else {
        return make_graph(step);
    }
    return 0;
}

static launch_fn g_launch;
static int (*g_set_device)(int ordinal);
static int run_step(const char* step);

/* thread:A+B+C: the steps in a thread of their own (a second host thread driving another GPU). */
static void* thread_steps(void* argument) {
    char* steps = argument;
    intptr_t status = 0;
    for (char* save = NULL, *step = strtok_r(steps, "+", &save); step != NULL && status == 0; step = strtok_r(NULL, "+", &save))
        status = run_step(step);
    return (void*)status;
}

static int run_step(const char* step) {
    launch_fn launch = g_launch;
    if (starts_with(step, "load:")) {
        void* library = dlopen(step + 5, RTLD_NOW);
        if (library == NULL) {
            fprintf(stderr, "shim_host: %s\n", dlerror());
            return 1;
        }
        void* symbol = dlsym(library, "fake_cuda_launch");
        if (symbol == NULL) {
            fprintf(stderr, "shim_host: %s has no fake_cuda_launch\n", step + 5);
            return 1;
        }
        memcpy(&g_launch, &symbol, sizeof g_launch);
        symbol = dlsym(library, "fake_cuda_set_device");
        memcpy(&g_set_device, &symbol, sizeof g_set_device);
        resolve_graph_api(library);
        printf("loaded\n");
    } else if (starts_with(step, "launch:")) {
        char* end = NULL;
        errno = 0;
        const unsigned long version = strtoul(step + 7, &end, 16);
        if (launch == NULL || errno != 0 || end == step + 7 || *end != '\0' || version > 0xff) {
            fprintf(stderr, "shim_host: bad step %s (version is one hex byte; load: comes first)\n", step);
            return 1;
        }
        unsigned char descriptor[DESCRIPTOR_BYTES];
        const int called = launch((unsigned)version, descriptor);
        printf("launch version=0x%02lx callback=%d word0=0x%08x mask=0x%08x,0x%08x,0x%08x,0x%08x low=0x%08x,0x%08x\n",
               version, called, u32_at(descriptor, 0), u32_at(descriptor, V04_MASK_OFFSET),
               u32_at(descriptor, V04_MASK_OFFSET + 4), u32_at(descriptor, V04_MASK_OFFSET + 8),
               u32_at(descriptor, V04_MASK_OFFSET + 12), u32_at(descriptor, V01_MASK_OFFSET),
               u32_at(descriptor, V01_MASK_OFFSET + 4));
    } else if (starts_with(step, "device:")) {
        const int ordinal = atoi(step + 7);
        if (g_set_device == NULL || g_set_device(ordinal) != 0) {
            fprintf(stderr, "shim_host: cannot make device %d current\n", ordinal);
            return 1;
        }
        printf("device %d\n", ordinal);
    } else if (starts_with(step, "thread:")) {
        char* steps = strdup(step + 7);
        pthread_t thread;
        void* status = NULL;
        if (steps == NULL || pthread_create(&thread, NULL, thread_steps, steps) != 0) return 1;
        pthread_join(thread, &status);
        free(steps);
        if (status != NULL) return (int)(intptr_t)status;
    } else if (starts_with(step, "ready:")) {
        printf("ready\n");
        fflush(stdout); /* everything up to this step is on stdout before the file appears */
        const int fd = open(step + 6, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            fprintf(stderr, "shim_host: cannot create %s: %s\n", step + 6, strerror(errno));
            return 1;
        }
        close(fd);
    } else if (starts_with(step, "wait:")) {
        if (wait_for(step + 5) != 0) {
            fprintf(stderr, "shim_host: %s did not appear within 20 s\n", step + 5);
            return 2;
        }
        printf("resumed\n");
    } else if (starts_with(step, "graph") || starts_with(step, "devgraph:") || starts_with(step, "execdestroy:")) {
        const int status = graph_step(step);
        if (status != 0) return status;
    } else if (strcmp(step, "pid") == 0) {
        printf("pid %d\n", (int)getpid());
    } else {
        fprintf(stderr, "shim_host: unknown step %s\n", step);
        return 1;
    }
    fflush(stdout);
    return 0;
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const int status = run_step(argv[i]);
        if (status != 0) return status;
    }
    return 0;
}
