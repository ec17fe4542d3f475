/* How libcuda comes into the process and when the launch callback is subscribed (shim_libcuda.h). */
#define _GNU_SOURCE
#include "shim_libcuda.h"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "registry_layout.h"
#include "shim_core.h"

#define EXPORT __attribute__((visibility("default")))

/* The launch callback, put off while the stream path confines every launch (stream_path.h). */
static void* g_deferred_libcuda;
static uint32_t g_callback_state; /* 0 not subscribed, 1 subscribing, 2 subscribed (atomic) */

void gpupart_libcuda_subscribe_now(void* libcuda) {
    __atomic_store_n(&g_callback_state, 1u, __ATOMIC_RELEASE);
    gpupart_shim_subscribe(libcuda, GPUPART_LAUNCH_PATH_CALLBACK);
    __atomic_store_n(&g_callback_state, 2u, __ATOMIC_RELEASE);
}

void gpupart_libcuda_defer(void* libcuda) { __atomic_store_n(&g_deferred_libcuda, libcuda, __ATOMIC_RELEASE); }

void gpupart_shim_ensure_callback(void) {
    if (__atomic_load_n(&g_callback_state, __ATOMIC_ACQUIRE) == 2u) return;
    while (gpupart_shim_setup_state() == 1) sched_yield(); /* setup decides first */
    uint32_t expected = 0;
    void* libcuda = __atomic_load_n(&g_deferred_libcuda, __ATOMIC_ACQUIRE); /* the program holds it loaded */
    if (libcuda != NULL &&
        __atomic_compare_exchange_n(&g_callback_state, &expected, 1u, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        gpupart_shim_subscribe(libcuda, GPUPART_LAUNCH_PATH_STREAMS_AND_CALLBACK);
        __atomic_store_n(&g_callback_state, 2u, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&g_callback_state, __ATOMIC_ACQUIRE) == 1u) sched_yield(); /* another thread subscribes */
}

typedef void* (*dlopen_fn)(const char*, int);

static dlopen_fn real_dlopen(void) {
    static dlopen_fn found;
    dlopen_fn real = __atomic_load_n(&found, __ATOMIC_ACQUIRE);
    if (real == NULL) {
        void* object = gpupart_next_symbol("dlopen");
        memcpy(&real, &object, sizeof real); /* POSIX returns functions as object pointers; ISO C forbids the cast */
        __atomic_store_n(&found, real, __ATOMIC_RELEASE);
    }
    return real;
}

void* gpupart_real_dlopen(const char* file, int flags) { return real_dlopen()(file, flags); }

void* gpupart_libcuda_if_loaded(void) { return real_dlopen()("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW); }

/* Whether the object `handle` or one it depends on lists libcuda among its DT_NEEDED entries: its calls
 * bind to libcuda directly. Read from the loaded objects' dynamic sections. */
static int needs_libcuda(struct link_map* map) {
    const ElfW(Dyn)* dyn = map->l_ld;
    const char* strings = NULL;
    for (const ElfW(Dyn)* d = dyn; d != NULL && d->d_tag != DT_NULL; ++d)
        if (d->d_tag == DT_STRTAB) strings = (const char*)d->d_un.d_ptr;
    if (strings == NULL) return 0;
    if ((uintptr_t)strings < map->l_addr) strings += map->l_addr; /* a read-only dynamic section (the vDSO's) is not relocated */
    for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d)
        if (d->d_tag == DT_NEEDED && strstr(strings + d->d_un.d_val, "libcuda.so") != NULL) return 1;
    return 0;
}

static int links_libcuda(void* handle) {
    struct link_map* map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL) return 1; /* cannot tell: assume it does */
    /* Every object loaded so far: a dependency of `handle` may be the one that links libcuda. */
    while (map->l_prev != NULL) map = map->l_prev;
    for (; map != NULL; map = map->l_next)
        if (needs_libcuda(map)) return 1;
    return 0;
}

/* Forwards every dlopen; the first one after which libcuda is in the process sets the shim up. */
EXPORT void* dlopen(const char* file, int flags) {
    void* handle = real_dlopen()(file, flags);
    if (handle == NULL || file == NULL || !gpupart_shim_is_active_copy() || (flags & RTLD_NOLOAD) != 0) return handle;
    if (strstr(file, "libcuda.so") != NULL) {
        if (gpupart_shim_setup_state() == 0) gpupart_shim_setup_once(handle, 0);
        return handle;
    }
    void* libcuda = gpupart_libcuda_if_loaded();
    if (libcuda == NULL) return handle;
    if (gpupart_shim_setup_state() == 0) {
        gpupart_shim_setup_once(libcuda, 1); /* it came in as a dependency of `file`, which calls it directly */
    } else if (__atomic_load_n(&g_deferred_libcuda, __ATOMIC_ACQUIRE) != NULL &&
               __atomic_load_n(&g_callback_state, __ATOMIC_ACQUIRE) != 2u && links_libcuda(handle)) {
        /* A library linked against libcuda calls it past the shim's entry points: only the callback sees
         * every launch from now on. */
        gpupart_shim_ensure_callback();
    }
    dlclose(libcuda); /* drop the reference RTLD_NOLOAD took */
    return handle;
}


/* Where the dynamic linker resolves gpupart_last_error, the API's own name: the first copy loaded serves
 * the process (docs/registry-layout-5.md decision 1). Not libsmctrl's names: a program carrying libsmctrl
 * itself defines those, and must not switch the shim off. */
int gpupart_find_active_copy(void) {
    void* found = dlsym(RTLD_DEFAULT, "gpupart_last_error");
    Dl_info theirs, mine;
    void (*function)(void) = (void (*)(void))gpupart_find_active_copy; /* hidden: this copy's, never interposed */
    void* self;
    memcpy(&self, &function, sizeof self);
    if (found == NULL || dladdr(found, &theirs) == 0 || dladdr(self, &mine) == 0) return 1; /* loaded locally: alone */
    return theirs.dli_fbase == mine.dli_fbase;
}

/* libgpupart.so has no dlsym of its own (dlsym_interpose.c is the preloaded shim's alone). */
__attribute__((weak)) int gpupart_dlsym_interposed(void) { return 0; }
__attribute__((weak)) void* gpupart_next_symbol(const char* name) { return dlsym(RTLD_NEXT, name); }
