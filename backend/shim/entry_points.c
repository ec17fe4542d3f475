/* The driver entry points the stream path needs to see (entry_points.h). */
#define _GNU_SOURCE
#include "entry_points.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "shim_core.h"
#include "stream_path.h"

typedef int CUresult;
typedef void* CUstream;
#define PER_KIND 4 /* distinct driver functions per kind: the plain and per-thread variants, with room */
#define TRIGGERS 24

typedef CUresult (*launch_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                              void**, void**);
typedef CUresult (*coop_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void**);
typedef CUresult (*launch_ex_fn)(const void* config, void* f, void** params, void** extra);
typedef CUresult (*create_fn)(CUstream*, unsigned);
typedef CUresult (*create_prio_fn)(CUstream*, unsigned, int);
typedef CUresult (*destroy_fn)(CUstream);
/* Calls that only need the callback subscribed first take at most six integer or pointer arguments; on the
 * x86-64 and AArch64 calling conventions those travel in registers, so one forwarder of six serves every
 * such signature (extra registers are ignored by the callee). */
typedef CUresult (*forward6_fn)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);
typedef CUresult (*get_proc_v1_fn)(const char*, void**, int, uint64_t);
typedef CUresult (*get_proc_v2_fn)(const char*, void**, int, uint64_t, int*);

#define LAUNCH_CONFIG_STREAM 32 /* CUlaunchConfig: six dimensions and sharedMemBytes, then hStream */

static uintptr_t g_launch[PER_KIND];
static uintptr_t g_coop[PER_KIND];
static uintptr_t g_launch_ex[PER_KIND];
static uintptr_t g_create[PER_KIND];
static uintptr_t g_create_prio[PER_KIND];
static uintptr_t g_destroy[PER_KIND];
static uintptr_t g_trigger[TRIGGERS];
static uintptr_t g_get_proc_v1[PER_KIND];
static uintptr_t g_get_proc_v2[PER_KIND];

#define REAL(table, i, type) ((type)__atomic_load_n(&table[i], __ATOMIC_ACQUIRE))

/* A launch the stream path does not confine runs only once the callback path is there. */
static struct gpupart_stream_entry* before(CUstream stream) {
    struct gpupart_stream_entry* entry = gpupart_stream_path_before_launch((uint64_t)(uintptr_t)stream);
    if (entry == NULL) gpupart_shim_ensure_callback();
    return entry;
}

#define LAUNCH_WRAPPER(i)                                                                                          \
    static CUresult launch_##i(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
                               unsigned shared, CUstream stream, void** params, void** extra) {                    \
        struct gpupart_stream_entry* entry = before(stream);                                                       \
        const CUresult r = REAL(g_launch, i, launch_fn)(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra); \
        gpupart_stream_path_after_launch(entry);                                                                   \
        return r;                                                                                                  \
    }
#define COOP_WRAPPER(i)                                                                                          \
    static CUresult coop_##i(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
                             unsigned shared, CUstream stream, void** params) {                                  \
        struct gpupart_stream_entry* entry = before(stream);                                                     \
        const CUresult r = REAL(g_coop, i, coop_fn)(f, gx, gy, gz, bx, by, bz, shared, stream, params);          \
        gpupart_stream_path_after_launch(entry);                                                                 \
        return r;                                                                                                \
    }
#define LAUNCH_EX_WRAPPER(i)                                                                        \
    static CUresult launch_ex_##i(const void* config, void* f, void** params, void** extra) {       \
        CUstream stream = NULL;                                                                     \
        if (config != NULL) memcpy(&stream, (const char*)config + LAUNCH_CONFIG_STREAM, sizeof stream); \
        struct gpupart_stream_entry* entry = before(stream);                                        \
        const CUresult r = REAL(g_launch_ex, i, launch_ex_fn)(config, f, params, extra);            \
        gpupart_stream_path_after_launch(entry);                                                    \
        return r;                                                                                   \
    }
#define CREATE_WRAPPER(i)                                                                  \
    static CUresult create_##i(CUstream* stream, unsigned flags) {                         \
        const CUresult r = REAL(g_create, i, create_fn)(stream, flags);                    \
        if (r == 0 && stream != NULL) gpupart_stream_path_created((uint64_t)(uintptr_t)*stream); \
        return r;                                                                          \
    }
#define CREATE_PRIO_WRAPPER(i)                                                             \
    static CUresult create_prio_##i(CUstream* stream, unsigned flags, int priority) {      \
        const CUresult r = REAL(g_create_prio, i, create_prio_fn)(stream, flags, priority); \
        if (r == 0 && stream != NULL) gpupart_stream_path_created((uint64_t)(uintptr_t)*stream); \
        return r;                                                                          \
    }
#define DESTROY_WRAPPER(i)                                                  \
    static CUresult destroy_##i(CUstream stream) {                          \
        gpupart_stream_path_destroyed((uint64_t)(uintptr_t)stream);         \
        return REAL(g_destroy, i, destroy_fn)(stream);                      \
    }
#define TRIGGER_WRAPPER(i)                                                                                       \
    static CUresult trigger_##i(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t e, uintptr_t f) { \
        gpupart_shim_ensure_callback();                                                                          \
        return REAL(g_trigger, i, forward6_fn)(a, b, c, d, e, f);                                               \
    }
static CUresult get_proc_v1_0(const char*, void**, int, uint64_t);
static CUresult get_proc_v2_0(const char*, void**, int, uint64_t, int*);
#define GET_PROC_WRAPPERS(i)                                                                             \
    static CUresult get_proc_v1_##i(const char* symbol, void** pfn, int version, uint64_t flags) {       \
        const CUresult r = REAL(g_get_proc_v1, i, get_proc_v1_fn)(symbol, pfn, version, flags);          \
        if (r == 0 && symbol != NULL && pfn != NULL && *pfn != NULL) *pfn = gpupart_entry_point(symbol, *pfn); \
        return r;                                                                                        \
    }                                                                                                    \
    static CUresult get_proc_v2_##i(const char* symbol, void** pfn, int version, uint64_t flags, int* status) { \
        const CUresult r = REAL(g_get_proc_v2, i, get_proc_v2_fn)(symbol, pfn, version, flags, status);  \
        if (r == 0 && symbol != NULL && pfn != NULL && *pfn != NULL) *pfn = gpupart_entry_point(symbol, *pfn); \
        return r;                                                                                        \
    }

#define FOUR(M) M(0) M(1) M(2) M(3)
FOUR(LAUNCH_WRAPPER)
FOUR(COOP_WRAPPER)
FOUR(LAUNCH_EX_WRAPPER)
FOUR(CREATE_WRAPPER)
FOUR(CREATE_PRIO_WRAPPER)
FOUR(DESTROY_WRAPPER)
FOUR(GET_PROC_WRAPPERS)
FOUR(TRIGGER_WRAPPER)
TRIGGER_WRAPPER(4) TRIGGER_WRAPPER(5) TRIGGER_WRAPPER(6) TRIGGER_WRAPPER(7) TRIGGER_WRAPPER(8) TRIGGER_WRAPPER(9)
TRIGGER_WRAPPER(10) TRIGGER_WRAPPER(11) TRIGGER_WRAPPER(12) TRIGGER_WRAPPER(13) TRIGGER_WRAPPER(14) TRIGGER_WRAPPER(15)
TRIGGER_WRAPPER(16) TRIGGER_WRAPPER(17) TRIGGER_WRAPPER(18) TRIGGER_WRAPPER(19) TRIGGER_WRAPPER(20) TRIGGER_WRAPPER(21)
TRIGGER_WRAPPER(22) TRIGGER_WRAPPER(23)

#define AS_OBJECT(fn) ((void*)(uintptr_t)(fn))
static void* const k_launch[PER_KIND] = {AS_OBJECT(launch_0), AS_OBJECT(launch_1), AS_OBJECT(launch_2), AS_OBJECT(launch_3)};
static void* const k_coop[PER_KIND] = {AS_OBJECT(coop_0), AS_OBJECT(coop_1), AS_OBJECT(coop_2), AS_OBJECT(coop_3)};
static void* const k_launch_ex[PER_KIND] = {AS_OBJECT(launch_ex_0), AS_OBJECT(launch_ex_1), AS_OBJECT(launch_ex_2),
                                            AS_OBJECT(launch_ex_3)};
static void* const k_create[PER_KIND] = {AS_OBJECT(create_0), AS_OBJECT(create_1), AS_OBJECT(create_2), AS_OBJECT(create_3)};
static void* const k_create_prio[PER_KIND] = {AS_OBJECT(create_prio_0), AS_OBJECT(create_prio_1), AS_OBJECT(create_prio_2),
                                              AS_OBJECT(create_prio_3)};
static void* const k_destroy[PER_KIND] = {AS_OBJECT(destroy_0), AS_OBJECT(destroy_1), AS_OBJECT(destroy_2), AS_OBJECT(destroy_3)};
static void* const k_get_proc_v1[PER_KIND] = {AS_OBJECT(get_proc_v1_0), AS_OBJECT(get_proc_v1_1), AS_OBJECT(get_proc_v1_2),
                                              AS_OBJECT(get_proc_v1_3)};
static void* const k_get_proc_v2[PER_KIND] = {AS_OBJECT(get_proc_v2_0), AS_OBJECT(get_proc_v2_1), AS_OBJECT(get_proc_v2_2),
                                              AS_OBJECT(get_proc_v2_3)};
static void* const k_trigger[TRIGGERS] = {
    AS_OBJECT(trigger_0),  AS_OBJECT(trigger_1),  AS_OBJECT(trigger_2),  AS_OBJECT(trigger_3),  AS_OBJECT(trigger_4),
    AS_OBJECT(trigger_5),  AS_OBJECT(trigger_6),  AS_OBJECT(trigger_7),  AS_OBJECT(trigger_8),  AS_OBJECT(trigger_9),
    AS_OBJECT(trigger_10), AS_OBJECT(trigger_11), AS_OBJECT(trigger_12), AS_OBJECT(trigger_13), AS_OBJECT(trigger_14),
    AS_OBJECT(trigger_15), AS_OBJECT(trigger_16), AS_OBJECT(trigger_17), AS_OBJECT(trigger_18), AS_OBJECT(trigger_19),
    AS_OBJECT(trigger_20), AS_OBJECT(trigger_21), AS_OBJECT(trigger_22), AS_OBJECT(trigger_23)};

/* The shim's function for `real` in a kind's table: the one already holding `real`, or a free one. NULL
 * when the table is full. */
static void* wrapper(uintptr_t* reals, void* const* wrappers, int count, void* real_object) {
    const uintptr_t real = (uintptr_t)real_object;
    for (int i = 0; i < count; ++i) {
        uintptr_t held = __atomic_load_n(&reals[i], __ATOMIC_ACQUIRE);
        if (held == real) return wrappers[i];
        if (held == 0 && __atomic_compare_exchange_n(&reals[i], &held, real, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return wrappers[i];
        if (held == real) return wrappers[i]; /* another thread stored the same function meanwhile */
    }
    return NULL;
}

static int named(const char* name, const char* base) {
    const size_t n = strlen(base);
    return strncmp(name, base, n) == 0 && (name[n] == '\0' || strcmp(name + n, "_ptsz") == 0 || strcmp(name + n, "_ptds") == 0 ||
                                           strcmp(name + n, "_v2") == 0 || strcmp(name + n, "_v2_ptsz") == 0);
}

static int starts(const char* name, const char* prefix) { return strncmp(name, prefix, strlen(prefix)) == 0; }

void* gpupart_entry_point(const char* name, void* real) {
    if (name == NULL || real == NULL || !gpupart_stream_path_on() || strncmp(name, "cu", 2) != 0) return real;
    void* mine = NULL;
    if (starts(name, "cuGetProcAddress")) {
        /* Which of the two resolvers `real` is, from the driver's own name for it. */
        Dl_info info;
        const int v2 = dladdr(real, &info) != 0 && info.dli_sname != NULL && strcmp(info.dli_sname, "cuGetProcAddress_v2") == 0;
        mine = v2 ? wrapper(g_get_proc_v2, k_get_proc_v2, PER_KIND, real) : wrapper(g_get_proc_v1, k_get_proc_v1, PER_KIND, real);
        return mine != NULL ? mine : real; /* a fifth resolver: its lookups are not wrapped, the callback stays the guard */
    }
    if (named(name, "cuStreamCreate")) mine = wrapper(g_create, k_create, PER_KIND, real);
    else if (named(name, "cuStreamCreateWithPriority")) mine = wrapper(g_create_prio, k_create_prio, PER_KIND, real);
    else if (named(name, "cuStreamDestroy")) mine = wrapper(g_destroy, k_destroy, PER_KIND, real);
    else if (named(name, "cuLaunchKernel")) mine = wrapper(g_launch, k_launch, PER_KIND, real);
    else if (named(name, "cuLaunchKernelEx")) mine = wrapper(g_launch_ex, k_launch_ex, PER_KIND, real);
    else if (named(name, "cuLaunchCooperativeKernel")) mine = wrapper(g_coop, k_coop, PER_KIND, real);
    else if (named(name, "cuLaunchHostFunc")) return real; /* a host function, no kernel */
    else if (named(name, "cuLaunchCooperativeKernelMultiDevice") || named(name, "cuLaunch") || named(name, "cuLaunchGrid") ||
             named(name, "cuLaunchGridAsync") || starts(name, "cuGraphInstantiate") || named(name, "cuGraphLaunch") ||
             named(name, "cuGraphUpload") || starts(name, "cuStreamBeginCapture"))
        mine = wrapper(g_trigger, k_trigger, TRIGGERS, real); /* at most six integer arguments each */
    else if (starts(name, "cuLaunch"))
        gpupart_shim_ensure_callback(); /* a launch call this shim does not know: the callback path, now */
    else
        return real;
    if (mine == NULL) gpupart_shim_ensure_callback(); /* no room for another wrapper: the callback path, now */
    return mine != NULL ? mine : real;
}
