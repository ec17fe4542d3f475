/*
 * stream_path_stress: many threads launching on ONE stream of the test double while `gpupart set` keeps
 * changing the process's mask (stream_path_stress.sh). The shim rewrites the stream's mask field between
 * launches, and the test double reads that field while it builds each launch's descriptor, as the driver
 * does. Every launch must run on exactly one of the two masks the script alternates between, never on a mix
 * of their words (a half-written field), never on no SM.
 *   stream_path_stress THREADS LAUNCHES_PER_THREAD SMS_A SMS_B READY_FILE
 * SMS_A and SMS_B: how many SMs each mask allows; the two sets are told apart by count. Prints one line:
 * "launches N a A b B other O" and exits 0 when O is 0 and every launch succeeded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SM_WORDS 8

typedef int (*create_fn)(void**, unsigned);
typedef int (*launch_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);
typedef int (*last_sms_fn)(uint32_t*);

static create_fn g_create;
static launch_fn g_launch;
static last_sms_fn g_last_sms;
static void* g_stream;
static long g_launches, g_sms_a, g_sms_b;
static long g_a, g_b, g_other, g_failed;

static void* resolve(void* library, const char* name) {
    void* found = dlsym(library, name); /* through the shim's dlsym, as the CUDA runtime's lookups go */
    if (found == NULL) {
        fprintf(stderr, "no %s in the test double\n", name);
        exit(1);
    }
    return found;
}

static void* launcher(void* unused) {
    (void)unused;
    for (long i = 0; i < g_launches; ++i) {
        if (g_launch(NULL, 1, 1, 1, 1, 1, 1, 0, g_stream, NULL, NULL) != 0) {
            __atomic_add_fetch(&g_failed, 1, __ATOMIC_RELAXED);
            continue;
        }
        uint32_t sms[SM_WORDS];
        const int count = g_last_sms(sms);
        if (count == g_sms_a) __atomic_add_fetch(&g_a, 1, __ATOMIC_RELAXED);
        else if (count == g_sms_b) __atomic_add_fetch(&g_b, 1, __ATOMIC_RELAXED);
        else __atomic_add_fetch(&g_other, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char** argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: stream_path_stress THREADS LAUNCHES SMS_A SMS_B READY_FILE\n");
        return 1;
    }
    const int threads = atoi(argv[1]);
    g_launches = atol(argv[2]);
    g_sms_a = atol(argv[3]);
    g_sms_b = atol(argv[4]);
    void* library = dlopen("libcuda.so.1", RTLD_NOW);
    if (library == NULL || threads < 1 || threads > 64) {
        fprintf(stderr, "cannot load the test double (%s) or bad THREADS\n", dlerror());
        return 1;
    }
    void* object = resolve(library, "cuStreamCreate");
    memcpy(&g_create, &object, sizeof object);
    object = resolve(library, "cuLaunchKernel");
    memcpy(&g_launch, &object, sizeof object);
    object = resolve(library, "fake_cuda_last_sms");
    memcpy(&g_last_sms, &object, sizeof object);
    if (g_create(&g_stream, 0) != 0) return 1;
    FILE* ready = fopen(argv[5], "w");
    if (ready != NULL) fclose(ready);
    pthread_t ids[64];
    for (int t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, launcher, NULL);
    for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
    printf("launches %ld a %ld b %ld other %ld failed %ld\n", g_launches * threads, g_a, g_b, g_other, g_failed);
    return g_other == 0 && g_failed == 0 ? 0 : 1;
}
