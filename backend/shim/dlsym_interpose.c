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

#if defined(__has_attribute) && __has_attribute(no_sanitize)
#define NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))
#else
#define NO_SANITIZE
#endif

/* The C library's own `name` (dlsym, dlopen), past every interposer, by its symbol versions: the default
 * version since glibc 2.34, then x86-64's and AArch64's first. Resolved once, into `*cache`. */
NO_SANITIZE static void* libc_function(void** cache, const char* name) {
    void* found = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (found == NULL) {
        static const char* const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
        for (size_t i = 0; found == NULL && i < sizeof versions / sizeof versions[0]; ++i) found = dlvsym(RTLD_NEXT, name, versions[i]);
        __atomic_store_n(cache, found, __ATOMIC_RELEASE);
    }
    return found;
}

typedef void* (*dlsym_fn)(void*, const char*);
NO_SANITIZE static dlsym_fn real_dlsym(void) {
    static void* cache;
    void* object = libc_function(&cache, "dlsym");
    dlsym_fn real;
    memcpy(&real, &object, sizeof real);
    return real;
}

/* The C library's dlopen and dlclose, past every interposer: the shim's own dlopen, libgpupart.so's when
 * both are loaded (its lookup of the next dlopen would come back here), and a sanitizer runtime's. */
typedef void* (*dlopen_fn)(const char*, int);
typedef int (*dlclose_fn)(void*);

/* Whether `path` names a sanitizer runtime (libasan, libtsan, libubsan, liblsan, clang's libclang_rt.*). A
 * loop of our own: the C library's string functions are what such a runtime intercepts. */
NO_SANITIZE static int is_sanitizer_runtime(const char* path) {
    static const char* const names[] = {"libasan", "libtsan", "libubsan", "liblsan", "libclang_rt."};
    for (const char* at = path; at != NULL && *at != '\0'; ++at)
        for (size_t n = 0; n < sizeof names / sizeof names[0]; ++n) {
            size_t i = 0;
            while (names[n][i] != '\0' && at[i] == names[n][i]) ++i;
            if (names[n][i] == '\0') return 1;
        }
    return 0;
}

/* The objects after the caller's, in load order (the link map; not dl_iterate_phdr, which a sanitizer
 * runtime intercepts: its own lookups come here before it is set up, as it resolves every function it wraps
 * with dlsym(RTLD_NEXT) at start; for the same reason nothing here is instrumented). Each is opened by name
 * (already loaded: RTLD_NOLOAD) for a handle to look in. */
NO_SANITIZE static void* next_after(const void* caller, const char* name) {
    static void* open_cache;
    static void* close_cache;
    void* open_object = libc_function(&open_cache, "dlopen");
    void* close_object = libc_function(&close_cache, "dlclose");
    dlopen_fn open_library;
    dlclose_fn close_library;
    memcpy(&open_library, &open_object, sizeof open_library);
    memcpy(&close_library, &close_object, sizeof close_library);
    Dl_info info;
    struct link_map* map = NULL;
    if (open_library == NULL || close_library == NULL || dladdr1(caller, &info, (void**)&map, RTLD_DL_LINKMAP) == 0 || map == NULL)
        return NULL;
    /* A sanitizer runtime looks up the functions it wraps while it starts, when nothing may allocate (dlopen
     * would): the C library's answer relative to the shim is theirs too (libc's, loaded before them). */
    if (is_sanitizer_runtime(map->l_name)) return real_dlsym()(RTLD_NEXT, name);
    for (struct link_map* next = map->l_next; next != NULL; next = next->l_next) {
        if (next->l_name == NULL || next->l_name[0] == '\0') continue; /* the vDSO: no file to open */
        void* handle = open_library(next->l_name, RTLD_LAZY | RTLD_NOLOAD);
        if (handle == NULL) continue;
        void* symbol = real_dlsym()(handle, name);
        close_library(handle);
        /* dlsym on a handle searches the object's dependencies too: only the object's own definition counts. */
        struct link_map* owner = NULL;
        Dl_info where;
        if (symbol != NULL && dladdr1(symbol, &where, (void**)&owner, RTLD_DL_LINKMAP) != 0 && owner == next) return symbol;
    }
    /* Some definitions a handle does not show (the dynamic linker's private ones, which a sanitizer runtime
     * looks up): the C library's own answer relative to the shim, if it lies after the caller. */
    void* symbol = real_dlsym()(RTLD_NEXT, name);
    struct link_map* owner = NULL;
    Dl_info where;
    if (symbol == NULL || dladdr1(symbol, &where, (void**)&owner, RTLD_DL_LINKMAP) == 0) return NULL;
    for (struct link_map* next = map->l_next; next != NULL; next = next->l_next)
        if (next == owner) return symbol;
    return NULL;
}

NO_SANITIZE __attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
    if (handle == RTLD_NEXT) {
        void* next = next_after(__builtin_return_address(0), name);
        /* Not found: a lookup of a version no object has makes the C library set dlerror's "undefined symbol". */
        return next != NULL ? next : dlvsym(RTLD_NEXT, name, "GPUPART_NO_SUCH_VERSION");
    }
    void* found = real_dlsym()(handle, name);
    /* Only the driver's functions ("cu...") may be handed out wrapped; the test stays here, uninstrumented. */
    return found != NULL && name[0] == 'c' && name[1] == 'u' ? gpupart_entry_point(name, found) : found;
}

int gpupart_dlsym_interposed(void) { return 1; }

void* gpupart_next_symbol(const char* name) { return real_dlsym()(RTLD_NEXT, name); }
