/*
 * graph_remask_stress: threads replaying CUDA graph execs of the test double while `gpupart set` keeps
 * changing the process's mask (graph_end_to_end.sh). The shim's re-mask thread toggles and uploads those
 * execs while they are being replayed; the test double counts every time two calls were inside one exec
 * at once (fake_graph_overlaps), which the shim's exclusion must make impossible.
 *   graph_remask_stress THREADS READY_FILE STOP_FILE
 * Each thread replays its own 4-kernel exec and, every 16 replays, re-enables one of its nodes (an exec
 * call of the application's, which the thread must not overlap either) until STOP_FILE exists; then each
 * exec is replayed once more and its kernels' masks printed. stdout: "replays N", one "exec I masks=..."
 * line per thread, "overlaps O". Exit 0 when every call succeeded and O is 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 16
#define KERNELS 4

typedef int (*create_fn)(void**, unsigned);
typedef void* (*add_kernel_fn)(void*);
typedef int (*instantiate_fn)(void**, void*, unsigned long long);
typedef int (*launch_fn)(void*, void*);
typedef int (*set_enabled_fn)(void*, void*, unsigned);
typedef int (*masks_fn)(void*, uint32_t*, size_t, unsigned*);
typedef unsigned (*overlaps_fn)(void);

static launch_fn g_launch;
static set_enabled_fn g_set_enabled;
static void* g_execs[MAX_THREADS];
static void* g_nodes[MAX_THREADS][KERNELS];
static const char* g_stop;
static long g_replays, g_failures;

static void* replay(void* argument) {
    const long t = (long)(intptr_t)argument;
    long replays = 0, failures = 0;
    while (access(g_stop, F_OK) != 0) {
        for (int i = 0; i < 64; ++i) {
            failures += g_launch(g_execs[t], NULL) != 0;
            if (++replays % 16 == 0) failures += g_set_enabled(g_execs[t], g_nodes[t][replays / 16 % KERNELS], 1) != 0;
        }
    }
    __atomic_add_fetch(&g_replays, replays, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_failures, failures, __ATOMIC_RELAXED);
    return NULL;
}

#define RESOLVE(into, name)                                                         \
    do {                                                                            \
        void* found_ = dlsym(library, name);                                        \
        if (found_ == NULL) {                                                       \
            fprintf(stderr, "graph_remask_stress: the test double lacks %s\n", name); \
            return 1;                                                               \
        }                                                                           \
        *(void**)&(into) = found_;                                                  \
    } while (0)

int main(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: graph_remask_stress FAKE_LIBCUDA THREADS READY_FILE STOP_FILE\n");
        return 1;
    }
    const int threads = atoi(argv[2]);
    g_stop = argv[4];
    if (threads < 1 || threads > MAX_THREADS) return 1;
    void* library = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL); /* as the CUDA runtime loads the driver */
    if (library == NULL) return 1;
    create_fn create;
    add_kernel_fn add_kernel;
    instantiate_fn instantiate;
    masks_fn masks;
    overlaps_fn overlaps;
    RESOLVE(create, "cuGraphCreate");
    RESOLVE(add_kernel, "fake_graph_add_kernel");
    RESOLVE(instantiate, "cuGraphInstantiateWithFlags");
    RESOLVE(g_launch, "cuGraphLaunch");
    RESOLVE(g_set_enabled, "cuGraphNodeSetEnabled");
    RESOLVE(masks, "fake_graph_exec_masks");
    RESOLVE(overlaps, "fake_graph_overlaps");
    for (int t = 0; t < threads; ++t) { /* the test double's pools are filled from one thread */
        void* graph = NULL;
        if (create(&graph, 0) != 0) return 1;
        for (int k = 0; k < KERNELS; ++k)
            if ((g_nodes[t][k] = add_kernel(graph)) == NULL) return 1;
        if (instantiate(&g_execs[t], graph, 0) != 0 || g_launch(g_execs[t], NULL) != 0) return 1;
    }
    pthread_t ids[MAX_THREADS];
    for (int t = 0; t < threads; ++t)
        if (pthread_create(&ids[t], NULL, replay, (void*)(intptr_t)t) != 0) return 1;
    FILE* ready = fopen(argv[3], "w");
    if (ready == NULL) return 1;
    fclose(ready);
    for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
    printf("replays %ld\n", g_replays);
    for (int t = 0; t < threads; ++t) {
        uint32_t allowed[KERNELS];
        if (g_launch(g_execs[t], NULL) != 0 || masks(g_execs[t], allowed, KERNELS, NULL) != KERNELS) return 1;
        printf("exec %d masks=0x%08x,0x%08x,0x%08x,0x%08x\n", t, allowed[0], allowed[1], allowed[2], allowed[3]);
    }
    printf("overlaps %u\n", overlaps());
    return g_failures == 0 && overlaps() == 0 ? 0 : 1;
}
