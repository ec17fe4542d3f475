/*
 * Investigation (not a product part, not a regression test): can a preloaded library confine an unmodified
 * CUDA program's eager launches WITHOUT the driver's tools-callback table, whose mere subscription caps a
 * process's launches from several threads (tests/device/investigate/callback_cost.cu)?
 *
 * How it tries: the CUDA runtime finds the driver's functions with dlsym(libcuda, "cuGetProcAddress_v2") and
 * then asks cuGetProcAddress for each entry point. This library interposes dlsym, hands back its own
 * cuGetProcAddress, and through it wraps stream creation: each stream the program creates gets the driver's
 * own per-stream TPC mask (the field libsmctrl's stream API writes: at 0x51c of the stream object, the one a
 * CUstream's first word points to, on CUDA 13.0 / driver 580.159.04; a 32-bit enable word then four 32-bit
 * words, a set bit disables that TPC number).
 * Launches are wrapped only to count those on the default streams, which this path cannot mask.
 *   LD_PRELOAD=libgpupart-investigate-wrap.so GPUPART_WRAP_ALLOWED=<hex of allowed TPC numbers, low 64> prog
 * The offset is written only on the driver build it was measured on (/proc/driver/nvidia/version).
 * At exit, one line on stderr: what was wrapped and counted (launches only with GPUPART_WRAP_COUNT=1: the
 * counters are shared and would slow a multi-threaded launcher).
 * Known gap of interposing dlsym: a dlsym(RTLD_NEXT, ...) made through it is resolved relative to this
 * library, not its caller; a product version would have to keep the caller's meaning.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_MASK_OFFSET 0x51c
#define MEASURED_DRIVER "580.159.04"
#define LEGACY_STREAM ((uintptr_t)0x1)
#define PER_THREAD_STREAM ((uintptr_t)0x2)

typedef int CUresult;
typedef void* CUstream;
typedef CUresult (*get_proc_v2_fn)(const char*, void**, int, uint64_t, int*);
typedef CUresult (*get_proc_v1_fn)(const char*, void**, int, uint64_t);
typedef CUresult (*stream_create_fn)(CUstream*, unsigned);
typedef CUresult (*stream_create_prio_fn)(CUstream*, unsigned, int);
typedef CUresult (*launch_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                              void**, void**);

static get_proc_v2_fn real_get_proc_v2;
static get_proc_v1_fn real_get_proc_v1;
static stream_create_fn real_stream_create;
static stream_create_prio_fn real_stream_create_prio;
static launch_fn real_launch, real_launch_ptsz;
static uint32_t g_disable[4];
static int g_write_allowed = -1;
static int g_count = -1;
static unsigned long g_dlsym_hits, g_proc_hits, g_streams_masked, g_default_launches, g_stream_launches;

static void* real_dlsym(void* handle, const char* name) {
    static void* (*found)(void*, const char*);
    if (found == NULL) found = (void* (*)(void*, const char*))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    return found(handle, name);
}

static int write_allowed(void) {
    if (g_write_allowed >= 0) return g_write_allowed;
    char text[512] = "";
    FILE* f = fopen("/proc/driver/nvidia/version", "r");
    if (f != NULL) {
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
    }
    const char* allowed = getenv("GPUPART_WRAP_ALLOWED");
    g_write_allowed = strstr(text, MEASURED_DRIVER) != NULL && allowed != NULL;
    if (g_write_allowed) {
        const uint64_t mask = strtoull(allowed, NULL, 16);
        g_disable[0] = ~(uint32_t)mask;
        g_disable[1] = ~(uint32_t)(mask >> 32);
        g_disable[2] = g_disable[3] = ~0u;
    } else {
        fprintf(stderr, "entry_wrap: not driver %s or no GPUPART_WRAP_ALLOWED: streams are left alone\n", MEASURED_DRIVER);
    }
    return g_write_allowed;
}

static void write_mask(CUstream stream, const uint32_t disable[4]);

static void mask_stream(CUstream stream) {
    if (stream == NULL || !write_allowed()) return;
    write_mask(stream, g_disable);
    __atomic_add_fetch(&g_streams_masked, 1, __ATOMIC_RELAXED);
}

/* A live change: from the launch number GPUPART_WRAP_SWITCH_AT on a created stream (counting from 1, with
 * GPUPART_WRAP_COUNT=1), that stream gets GPUPART_WRAP_ALLOWED2 just before the launch. */
static void maybe_switch(CUstream stream, unsigned long launch_number) {
    const char* at = getenv("GPUPART_WRAP_SWITCH_AT");
    const char* allowed = getenv("GPUPART_WRAP_ALLOWED2");
    if (at == NULL || allowed == NULL || launch_number != strtoul(at, NULL, 10) || !write_allowed()) return;
    const uint64_t mask = strtoull(allowed, NULL, 16);
    const uint32_t disable[4] = {~(uint32_t)mask, ~(uint32_t)(mask >> 32), ~0u, ~0u};
    write_mask(stream, disable);
}

static void write_mask(CUstream stream, const uint32_t disable[4]) {
    char* object = *(char**)stream; /* a CUstream's first word points to the driver's stream object */
    if (object == NULL) return;
    uint32_t* field = (uint32_t*)(object + STREAM_MASK_OFFSET);
    for (int i = 0; i < 4; ++i) __atomic_store_n(&field[1 + i], disable[i], __ATOMIC_RELAXED);
    __atomic_store_n(&field[0], 1u, __ATOMIC_RELEASE);
}

static CUresult wrap_stream_create(CUstream* stream, unsigned flags) {
    const CUresult r = real_stream_create(stream, flags);
    if (r == 0) mask_stream(*stream);
    return r;
}

static CUresult wrap_stream_create_prio(CUstream* stream, unsigned flags, int priority) {
    const CUresult r = real_stream_create_prio(stream, flags, priority);
    if (r == 0) mask_stream(*stream);
    return r;
}

static void count_launch(CUstream stream) {
    if (__builtin_expect(g_count < 0, 0)) g_count = getenv("GPUPART_WRAP_COUNT") != NULL;
    if (!g_count) return;
    const uintptr_t s = (uintptr_t)stream;
    if (s == 0 || s == LEGACY_STREAM || s == PER_THREAD_STREAM)
        __atomic_add_fetch(&g_default_launches, 1, __ATOMIC_RELAXED);
    else
        maybe_switch(stream, __atomic_add_fetch(&g_stream_launches, 1, __ATOMIC_RELAXED));
}

static CUresult wrap_launch(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned shared, CUstream stream, void** params, void** extra) {
    count_launch(stream);
    return real_launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

static CUresult wrap_launch_ptsz(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                 unsigned shared, CUstream stream, void** params, void** extra) {
    count_launch(stream);
    return real_launch_ptsz(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

/* Replaces what the driver answered for `symbol` with a wrapper where this library has one. The per-thread
 * flag (bit 1 of flags: CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) gives the _ptsz launch. */
static void substitute(const char* symbol, void** pfn, uint64_t flags) {
    if (*pfn == NULL) return;
    __atomic_add_fetch(&g_proc_hits, 1, __ATOMIC_RELAXED);
    if (strcmp(symbol, "cuStreamCreate") == 0) {
        real_stream_create = (stream_create_fn)*pfn;
        *pfn = (void*)wrap_stream_create;
    } else if (strcmp(symbol, "cuStreamCreateWithPriority") == 0) {
        real_stream_create_prio = (stream_create_prio_fn)*pfn;
        *pfn = (void*)wrap_stream_create_prio;
    } else if (strcmp(symbol, "cuLaunchKernel") == 0) {
        if (flags & 2) {
            real_launch_ptsz = (launch_fn)*pfn;
            *pfn = (void*)wrap_launch_ptsz;
        } else {
            real_launch = (launch_fn)*pfn;
            *pfn = (void*)wrap_launch;
        }
    }
}

static CUresult wrap_get_proc_v2(const char* symbol, void** pfn, int version, uint64_t flags, int* status);

static CUresult wrap_get_proc_v2(const char* symbol, void** pfn, int version, uint64_t flags, int* status) {
    const CUresult r = real_get_proc_v2(symbol, pfn, version, flags, status);
    if (r != 0 || symbol == NULL || pfn == NULL) return r;
    if (strncmp(symbol, "cuGetProcAddress", 16) == 0) {
        *pfn = (void*)wrap_get_proc_v2; /* a runtime that asks for the resolver itself gets this one */
        return r;
    }
    substitute(symbol, pfn, flags);
    return r;
}

static CUresult wrap_get_proc_v1(const char* symbol, void** pfn, int version, uint64_t flags) {
    const CUresult r = real_get_proc_v1(symbol, pfn, version, flags);
    if (r == 0 && symbol != NULL && pfn != NULL) substitute(symbol, pfn, flags);
    return r;
}

void* dlsym(void* handle, const char* name) {
    void* found = real_dlsym(handle, name);
    if (found == NULL || name == NULL) return found;
    if (strcmp(name, "cuGetProcAddress_v2") == 0) {
        __atomic_add_fetch(&g_dlsym_hits, 1, __ATOMIC_RELAXED);
        real_get_proc_v2 = (get_proc_v2_fn)found;
        return (void*)wrap_get_proc_v2;
    }
    if (strcmp(name, "cuGetProcAddress") == 0) {
        __atomic_add_fetch(&g_dlsym_hits, 1, __ATOMIC_RELAXED);
        real_get_proc_v1 = (get_proc_v1_fn)found;
        return (void*)wrap_get_proc_v1;
    }
    return found;
}

__attribute__((destructor)) static void report(void) {
    fprintf(stderr, "entry_wrap: dlsym_hits %lu proc_hits %lu streams_masked %lu default_stream_launches %lu "
            "created_stream_launches %lu\n", g_dlsym_hits, g_proc_hits, g_streams_masked, g_default_launches,
            g_stream_launches);
}
