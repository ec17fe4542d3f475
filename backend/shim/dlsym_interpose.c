/*
 * dlsym in front of the C library's, in the preloaded shim only (libgpupart.so, which programs link, must
 * not change their dlsym): the CUDA runtime finds the driver's cuGetProcAddress through dlsym, and the
 * stream path needs to see the entry points it hands out (entry_points.h).
 *
 * The C library resolves dlsym(RTLD_NEXT, name) relative to the object that called dlsym. Called through
 * this function, that object would be the shim, so RTLD_NEXT is resolved here the way the C library would for
 * the real caller: the first definition of `name` in an object loaded after the caller's, in load order.
 * Without that, a library that wraps malloc and looks up the next malloc could find itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "entry_points.h"
#include "shim_core.h"

/* The C library's own `name` (dlsym, dlopen), past every interposer, by its symbol versions: the default
 * version since glibc 2.34, then x86-64's and AArch64's first. Resolved once, into `*cache`. */
static void* libc_function(void** cache, const char* name) {
    void* found = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (found == NULL) {
        static const char* const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
        for (size_t i = 0; found == NULL && i < sizeof versions / sizeof versions[0]; ++i) found = dlvsym(RTLD_NEXT, name, versions[i]);
        __atomic_store_n(cache, found, __ATOMIC_RELEASE);
    }
    return found;
}

typedef void* (*dlsym_fn)(void*, const char*);
static dlsym_fn real_dlsym(void) {
    static void* cache;
    void* object = libc_function(&cache, "dlsym");
    dlsym_fn real;
    memcpy(&real, &object, sizeof real);
    return real;
}

/* The C library's dlopen, past every interposer (the shim's own, and libgpupart.so's when both are loaded):
 * the search below opens objects with it, and an interposed dlopen looking up its next dlopen would come
 * back here. */
typedef void* (*dlopen_fn)(const char*, int);
static dlopen_fn libc_dlopen(void) {
    static void* cache;
    void* object = libc_function(&cache, "dlopen");
    dlopen_fn real;
    memcpy(&real, &object, sizeof real);
    return real;
}

struct next_search {
    uintptr_t caller_base; /* the calling object's load address */
    const char* name;
    int past_caller;
    void* found;
};

static int search_next(struct dl_phdr_info* info, size_t size, void* data) {
    (void)size;
    struct next_search* s = data;
    if (!s->past_caller) {
        s->past_caller = info->dlpi_addr == s->caller_base;
        return 0;
    }
    if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0') return 0; /* the vDSO has no file to open */
    if (libc_dlopen() == NULL) return 0;
    void* handle = libc_dlopen()(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == NULL) return 0;
    void* symbol = real_dlsym()(handle, s->name);
    Dl_info where;
    /* dlsym on a handle searches the object's dependencies too: only the object's own definition counts. */
    if (symbol != NULL && dladdr(symbol, &where) != 0 && where.dli_fname != NULL && strcmp(where.dli_fname, info->dlpi_name) == 0)
        s->found = symbol;
    dlclose(handle);
    return s->found != NULL;
}

static void* next_after(const void* caller, const char* name) {
    Dl_info info;
    struct link_map* map = NULL;
    if (dladdr1(caller, &info, (void**)&map, RTLD_DL_LINKMAP) == 0 || map == NULL) return NULL;
    struct next_search s = {(uintptr_t)map->l_addr, name, 0, NULL};
    dl_iterate_phdr(search_next, &s);
    return s.found;
}

__attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
    if (handle == RTLD_NEXT) {
        void* next = next_after(__builtin_return_address(0), name);
        /* Not found: a lookup of a version no object has makes the C library set dlerror's "undefined symbol". */
        return next != NULL ? next : dlvsym(RTLD_NEXT, name, "GPUPART_NO_SUCH_VERSION");
    }
    void* found = real_dlsym()(handle, name);
    return found != NULL ? gpupart_entry_point(name, found) : found;
}

int gpupart_dlsym_interposed(void) { return 1; }

void* gpupart_next_symbol(const char* name) { return real_dlsym()(RTLD_NEXT, name); }
