/*
 * libgpupart-shim.so: confines every kernel of an unmodified CUDA process to the TPCs its registry slot
 * allows, and follows changes to that slot while the process runs.
 *
 * How (docs/launch-path.md): the CUDA driver library has a tools-callback table; its "launch
 * descriptor about to be uploaded" callback lets us write the TPC disable mask into each kernel's
 * descriptor (QMD/TMD). Rules this file keeps:
 *  - A process that never loads libcuda is untouched: we only act once libcuda is loaded (already at
 *    start, or through dlopen, which we forward).
 *  - The launch path takes no lock, allocates nothing, makes no system call and never prints.
 *  - An unknown descriptor version is passed through untouched and reported in the slot, never guessed.
 *  - A mask with no real TPC is never applied (the kernel would wait forever).
 *  - Nothing here aborts the host: every failure is a status in the slot and one line on stderr at setup.
 * CUDA graphs, whose descriptors are built once at upload, are followed by gpupart_shim_graphs.c. The same
 * sources make libgpupart.so, the libsmctrl API (smctrl_api.c): the masks a program chooses itself
 * (app_mask_state.c) are combined here with the operator's, per launch.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_mask_state.h"
#include "launch_stream.h"
#include "registry_layout.h"
#include "registry_seqlock.h"
#include "registry_slot.h"
#include "shim_core.h"
#include "shim_devices.h"
#include "shim_graphs.h"
#include "shim_libcuda.h"
#include "shim_register.h"
#include "shim_start.h"
#include "slot_guard.h"
#include "stream_path.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- Launch descriptor layouts (measured on the H100 and H200, driver 580) ----------------------- */
#define DESC_VERSION_OFFSET 72    /* version byte of the descriptor */
#define V04_MASK_OFFSET 304       /* V04_00 (Hopper): 4 x u32 disable mask at 304..316; measured on H200 (0x40) */
#define V04_ENABLE_BIT 0x80000000u/* V04_00: bit 31 of the first u32 turns masking on */
#define V01_MASK_OFFSET 84        /* V01_06..V03_00 (Kepler..Ada): 2 x u32 disable mask at 84, 88 */

enum layout { LAYOUT_UNKNOWN, LAYOUT_MASK64, LAYOUT_MASK128 };

static enum layout layout_of(uint32_t version) {
    if (version == 0x40) return LAYOUT_MASK128;                   /* V04_00 only: V05 (Blackwell) moved fields */
    if (version >= 0x16 && version < 0x40) return LAYOUT_MASK64;  /* V01_06 .. V03_00 */
    return LAYOUT_UNKNOWN;
}

/* ---- The CUDA tools-callback table (docs/cuda-graphs.md, docs/launch-path.md) -------------------- */
static const unsigned char kCallbackTableId[16] = {0x2c, 0x8e, 0x0a, 0xd8, 0x07, 0x10, 0xab, 0x4e,
                                                   0x90, 0xdd, 0x54, 0x71, 0x9f, 0xe5, 0xf7, 0x4b};
#define TABLE_SUBSCRIBE 3
#define TABLE_ENABLE 6
#define DOMAIN_LAUNCH 0xb
#define CBID_DESCRIPTOR_UPLOAD 0x1
typedef void (*launch_callback)(void* user, int domain, int cbid, const void* params);
typedef int (*get_export_table_fn)(const void** table, const void* id);
typedef int (*subscribe_fn)(uint32_t* handle, launch_callback callback, void* user);
typedef int (*enable_fn)(uint32_t on, uint32_t handle, int domain, int cbid);

/* POSIX returns functions as object pointers (dlsym, the export table); ISO C forbids the cast, so copy the bits. */
#define AS_FUNCTION(fn, object_pointer)                       \
    do {                                                      \
        void* object_ = (object_pointer);                     \
        memcpy(&(fn), &object_, sizeof(fn));                  \
    } while (0)

/* ---- Process state ---------------------------------------------------------------------------------- */
static struct gpupart_slot_file g_private;          /* used when no registry slot could be made */
static struct gpupart_slot_file* g_slot = &g_private;
static char g_slot_path[512];
static int g_slot_pid;                              /* the process that owns g_slot_path */
static uint32_t g_setup_state;                      /* 0 not yet, 1 in progress, 2 done (atomic) */
static uint32_t g_initial_state = GPUPART_SHIM_WAITING;
static int g_inert;                                 /* another copy of the library serves this process */

/* Each launching thread keeps, per GPU, its own copy of that GPU's entry of the control block, so the hot
 * path reads only thread-local data plus the control block's sequence number. */
/* Small on purpose: initial-exec TLS comes from the static TLS surplus, which a shim loaded with dlopen
 * shares with every other such library (bench_shim_callback loads it so). */
struct applied {
    uint64_t generation;
    uint32_t seen_seq;
    uint8_t valid;
    uint8_t published_version; /* descriptor version this thread last published for this GPU */
    uint8_t publish_pending;   /* a publication lost its try-lock race: retry at the next launch */
    uint8_t refused;           /* the current control generation was refused (no real TPC) */
    uint8_t others_masked;     /* no mask for this GPU while the process has one for another GPU */
    struct gpupart_bound bound; /* the operator's mask: descriptor disable mask, the complement of the allowed TPCs */
};
#define UNKNOWN_GPU GPUPART_MAX_GPUS  /* t_applied index for launches whose GPU the driver did not tell */
static __thread struct applied t_applied[GPUPART_MAX_GPUS + 1] __attribute__((tls_model("initial-exec")));

static uint64_t realtime_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static uint64_t coarse_realtime_ns(void) { return gpupart_coarse_realtime_ns(); }

/* The process-wide state: WAITING until a first launch, then ACTIVE; setup failures stay. */
static void publish_process_state(struct gpupart_slot_file* slot, uint32_t state) {
    __atomic_store_n(&slot->status.state, state, __ATOMIC_RELEASE);
}

/* Publishes what this thread applies on GPU entry `gpu`. Threads race for it with a try-lock: a loser
 * retries at its next launch (another GPU's facts may be what the winner publishes). */
static void publish_status(struct gpupart_slot_file* slot, int gpu, uint32_t state, uint32_t version, struct applied* a) {
    a->published_version = (uint8_t)version; /* a descriptor version is one byte */
    a->publish_pending = 0;
    if (gpu < 0 || gpu >= (int)GPUPART_MAX_GPUS) { /* a GPU the driver did not name has no entry: the process says it */
        publish_process_state(slot, GPUPART_SHIM_GPU_UNKNOWN);
        return;
    }
    a->publish_pending = 1;
    if (__atomic_load_n(&slot->status.state, __ATOMIC_RELAXED) == GPUPART_SHIM_WAITING)
        publish_process_state(slot, GPUPART_SHIM_ACTIVE); /* a first launch on a known GPU */
    struct gpupart_status_gpu* entry = &slot->status.gpus[gpu];
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(&entry->writer_busy, &expected, 1u, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
    struct gpupart_status_gpu value;
    memset(&value, 0, sizeof value);
    value.state = state;
    value.descriptor_version = version;
    value.applied_generation = a->generation;
    value.applied_flags = a->bound.has_mask ? GPUPART_CONTROL_HAS_MASK : 0u;
    for (int i = 0; i < 4; ++i) value.applied[i] = a->bound.has_mask ? ~a->bound.disable[i] : 0u;
    gpupart_status_gpu_write(entry, &value);
    __atomic_store_n(&entry->writer_busy, 0u, __ATOMIC_RELEASE);
    a->publish_pending = 0;
}

/* What a thread applying `a` to descriptors of `version` reports. A refused request stays reported
 * until the next control change; an unknown descriptor overrides it (nothing is partitioned at all). */
static uint32_t state_of(const struct applied* a, uint32_t version) {
    if (layout_of(version) == LAYOUT_UNKNOWN) return GPUPART_SHIM_UNSUPPORTED_DESCRIPTOR;
    if (a->refused) return GPUPART_SHIM_MASK_REFUSED;
    return a->others_masked ? GPUPART_SHIM_NO_MASK_FOR_GPU : GPUPART_SHIM_ACTIVE;
}

/* A slot shrunk under this process (truncate -s N, any N below its size) reads as zeros past N in its first
 * page, without a fault: a control block read there would say "no mask". The file no longer reaches its
 * last page whenever N is at most one page, so touching that page first faults, and the slot guard swaps in
 * a private copy with the last control block this process adopted (and says so once). A truncation that
 * keeps the last page keeps the control block, which lies in the first. */
static void touch_last_page(const struct gpupart_slot_file* slot) {
    (void)*(const volatile uint8_t*)((const uint8_t*)slot + GPUPART_SLOT_FILE_SIZE - 1);
}

/* Reads the control block (bounded, never blocks) and adopts the entry for GPU `gpu` unless its mask has
 * no real TPC. A GPU without an entry runs unconfined (and says so when other GPUs have masks). */
static void refresh(struct applied* a, struct gpupart_slot_file* slot, int gpu, uint32_t version) {
    struct gpupart_control c;
    const int lost_before = gpupart_slot_guard_lost();
    if (gpupart_control_read(&slot->control, &c, 4) != 0) return; /* a write is in progress: keep our mask */
    touch_last_page(slot);
    /* Shrunk while it was read: what was read may be zeros; the next launch reads the guard's copy. Sequence
     * 0 was never written (a slot is created with a written block): zeros of a shrunk file where pages are
     * larger than the slot's halves. Either way keep the mask this thread has. */
    if (gpupart_slot_guard_lost() != lost_before || c.seq == 0) return;
    a->seen_seq = c.seq;
    if (a->valid && c.current.generation == a->generation) return;
    a->valid = 1;
    a->generation = c.current.generation;
    int index = -1;
    if (gpu >= 0) {
        struct gpupart_gpu_uuid uuid;
        for (int w = 0; w < 4; ++w) uuid.words[w] = gpupart_load32(&slot->status.gpus[gpu].uuid.words[w]);
        index = gpupart_control_find(&c.current, &uuid);
    }
    a->others_masked = 0;
    struct gpupart_bound* bound = &a->bound;
    if (index >= 0 && (c.current.gpus[index].flags & GPUPART_CONTROL_HAS_MASK) != 0) {
        const struct gpupart_control_gpu* entry = &c.current.gpus[index];
        if (!gpupart_devices_mask_usable(entry)) { /* the kernel would never run: keep the previous mask, say so */
            gpupart_add64(&slot->counters.refused_masks, 1);
            a->refused = 1;
            publish_status(slot, gpu, GPUPART_SHIM_MASK_REFUSED, version, a);
            return;
        }
        a->refused = 0;
        bound->has_mask = 1;
        uint32_t start_real[4];
        const int start_known = gpupart_devices_known_real(&entry->uuid, start_real);
        for (int i = 0; i < 4; ++i) {
            bound->disable[i] = ~entry->allowed[i];
            bound->real[i] = entry->real_tpcs[i] & (start_known ? start_real[i] : ~0u);
        }
        bound->real_known = 1;
        bound->low64_usable = ((entry->allowed[0] & bound->real[0]) | (entry->allowed[1] & bound->real[1])) != 0;
    } else {
        a->refused = 0;
        bound->has_mask = 0;
        bound->real_known = 0;
        for (uint32_t i = 0; i < c.current.count; ++i)
            if ((c.current.gpus[i].flags & GPUPART_CONTROL_HAS_MASK) != 0) a->others_masked = 1;
    }
    if (slot != &g_private) gpupart_slot_guard_remember(&c); /* what a truncated slot is replaced with */
    /* When this generation reached this GPU: the first launch there since the change (the exporter's
     * set-to-first-launch time). The precise clock (vDSO, no system call), once per change, not per
     * launch: the coarse one ticks every few ms and would read before the writer's precise time. */
    if (gpu >= 0) gpupart_store64(&slot->gpu_counters[gpu].applied_realtime_ns, realtime_ns());
    publish_status(slot, gpu, state_of(a, version), version, a);
}

/* The launch path: a size check, a pointer, a version byte, the device ordinal, a load of the slot's last
 * page, a sequence compare and 2-5 stores. */
static void on_launch(void* user, int domain, int cbid, const void* params) {
    (void)user;
    struct gpupart_slot_file* slot = __atomic_load_n(&g_slot, __ATOMIC_ACQUIRE);
    if (domain == GPUPART_DOMAIN_DRIVER_API) { /* one subscription, dispatched by call */
        if (!gpupart_launch_stream_on_api(cbid, params)) gpupart_graphs_on_api(slot, cbid, params); /* graph calls */
        return;
    }
    if (domain != DOMAIN_LAUNCH || cbid != CBID_DESCRIPTOR_UPLOAD) return;
    gpupart_add64(&slot->counters.launches, 1);
    gpupart_store64(&slot->counters.last_launch_realtime_ns, coarse_realtime_ns());
    if (params == NULL || *(const uint32_t*)params < 5 * sizeof(void*)) {
        gpupart_add64(&slot->counters.errors, 1);
        return;
    }
    uint8_t* desc = ((uint8_t* const*)params)[4];
    if (desc == NULL) {
        gpupart_add64(&slot->counters.errors, 1);
        return;
    }
    const uint32_t version = desc[DESC_VERSION_OFFSET];
    const int gpu = gpupart_devices_current_gpu(slot);
    struct applied* a = &t_applied[gpu >= 0 ? gpu : (int)UNKNOWN_GPU];
    touch_last_page(slot); /* one load: a slot shrunk since the last launch is swapped for the guard's copy here */
    if (!a->valid || __atomic_load_n(&slot->control.seq, __ATOMIC_ACQUIRE) != a->seen_seq) refresh(a, slot, gpu, version);
    if (version != a->published_version || a->publish_pending) {
        publish_status(slot, gpu, state_of(a, version), version, a);
    }
    if (gpu >= 0) gpupart_add64(&slot->gpu_counters[gpu].launches, 1);
    uint32_t disable[4], low64_usable = 0; /* the operator's mask, or the program's choice inside it */
    if (!gpupart_app_launch_mask(slot, gpu, &a->bound, disable, &low64_usable)) return;
    const enum layout layout = layout_of(version);
    if (layout == LAYOUT_MASK128) {
        memcpy(desc + V04_MASK_OFFSET, disable, 4 * sizeof(uint32_t));
        uint32_t first;
        memcpy(&first, desc, sizeof first);
        first |= V04_ENABLE_BIT;
        memcpy(desc, &first, sizeof first);
    } else if (layout == LAYOUT_MASK64 && low64_usable) {
        memcpy(desc + V01_MASK_OFFSET, disable, 2 * sizeof(uint32_t));
    } else {
        return; /* unknown layout (or no real TPC within 64 bits): pass-through, the status says so */
    }
    gpupart_add64(&slot->counters.masked_launches, 1);
    if (gpu >= 0) gpupart_add64(&slot->gpu_counters[gpu].masked_launches, 1);
}

int gpupart_shim_stream_bound(int gpu, uint32_t version, uint32_t* seen_seq, struct gpupart_bound* bound) {
    if (gpu < 0 || gpu >= (int)GPUPART_MAX_GPUS) return 0;
    struct gpupart_slot_file* slot = __atomic_load_n(&g_slot, __ATOMIC_ACQUIRE);
    struct applied* a = &t_applied[gpu];
    touch_last_page(slot);
    if (!a->valid || __atomic_load_n(&slot->control.seq, __ATOMIC_ACQUIRE) != a->seen_seq) refresh(a, slot, gpu, version);
    if (!a->valid) return 0; /* the control block could not be read yet: nothing to write */
    if (version != a->published_version || a->publish_pending) publish_status(slot, gpu, state_of(a, version), version, a);
    *seen_seq = a->seen_seq;
    *bound = a->bound;
    return 1;
}

/* ---- Setup: once libcuda is in the process ---------------------------------------------------------- */
/* Registers the process (shim_register.c) and publishes its slot: the registry's, or the private one. */
static void register_process(void) {
    struct gpupart_slot_file* slot =
        gpupart_shim_register(&g_private, g_slot_path, sizeof g_slot_path, &g_slot_pid, &g_initial_state);
    publish_process_state(slot, g_initial_state);
    __atomic_store_n(&g_slot, slot, __ATOMIC_RELEASE);
}

static void subscribe_launches(void* libcuda) {
    get_export_table_fn get_export_table;
    AS_FUNCTION(get_export_table, dlsym(libcuda, "cuGetExportTable"));
    const void* table = NULL;
    uint32_t handle = 0;
    if (get_export_table == NULL || get_export_table(&table, kCallbackTableId) != 0 || table == NULL) {
        fprintf(stderr, "gpupart-shim: this CUDA driver has no launch-callback table: kernels are not partitioned\n");
        g_initial_state = GPUPART_SHIM_CALLBACK_FAILED;
        return;
    }
    subscribe_fn subscribe;
    enable_fn enable;
    AS_FUNCTION(subscribe, ((void* const*)table)[TABLE_SUBSCRIBE]);
    AS_FUNCTION(enable, ((void* const*)table)[TABLE_ENABLE]);
    if (subscribe(&handle, on_launch, NULL) != 0 || enable(1, handle, DOMAIN_LAUNCH, CBID_DESCRIPTOR_UPLOAD) != 0) {
        fprintf(stderr, "gpupart-shim: CUDA refused the launch callback: kernels are not partitioned\n");
        g_initial_state = GPUPART_SHIM_CALLBACK_FAILED;
        return;
    }
    gpupart_graphs_setup(libcuda, handle, enable, g_slot); /* same subscription: the driver takes only one */
    gpupart_launch_stream_setup(handle, enable);
}

/* Subscribes the launch callback now and says so in the slot (shim_libcuda.c decides when). */
void gpupart_shim_subscribe(void* libcuda, uint32_t launch_path) {
    subscribe_launches(libcuda);
    if (g_initial_state == GPUPART_SHIM_CALLBACK_FAILED) publish_process_state(g_slot, g_initial_state);
    __atomic_store_n(&g_slot->status.launch_path, launch_path, __ATOMIC_RELEASE);
}

int gpupart_shim_setup_state(void) { return (int)__atomic_load_n(&g_setup_state, __ATOMIC_ACQUIRE); }

/* `at_start`: libcuda was in the process before the shim's constructor ran (the program is linked against
 * it), so its calls reach the driver without passing the shim's entry points: only the callback sees them. */
void gpupart_shim_setup_once(void* libcuda, int at_start) {
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(&g_setup_state, &expected, 1u, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
    register_process();      /* the slot exists before the first callback can run */
    gpupart_devices_setup(libcuda);
    if (!at_start && gpupart_dlsym_interposed() && gpupart_stream_path_setup()) {
        gpupart_libcuda_defer(libcuda);
        __atomic_store_n(&g_slot->status.launch_path, (uint32_t)GPUPART_LAUNCH_PATH_STREAMS, __ATOMIC_RELEASE);
    } else {
        gpupart_libcuda_subscribe_now(libcuda);
    }
    if (g_initial_state != GPUPART_SHIM_WAITING) publish_process_state(g_slot, g_initial_state);
    __atomic_store_n(&g_setup_state, 2u, __ATOMIC_RELEASE);
}

/* ---- What the API (smctrl_api.c) needs of the shim: shim_core.h ----------------------------------- */
struct gpupart_slot_file* gpupart_shim_slot(void) { return __atomic_load_n(&g_slot, __ATOMIC_ACQUIRE); }

int gpupart_shim_launch_callback_ok(void) { return g_initial_state != GPUPART_SHIM_CALLBACK_FAILED; }

int gpupart_shim_setup_for_api(char* why, size_t why_size) {
    if (__atomic_load_n(&g_setup_state, __ATOMIC_ACQUIRE) == 0) {
        void* libcuda = gpupart_real_dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL); /* kept: a CUDA program needs it */
        if (libcuda == NULL) {
            const char* error = dlerror();
            snprintf(why, why_size, "cannot load the CUDA driver libcuda.so.1 (%s): masks need it", error ? error : "not found");
            return ELIBACC;
        }
        gpupart_shim_setup_once(libcuda, 0);
    }
    while (__atomic_load_n(&g_setup_state, __ATOMIC_ACQUIRE) != 2u) sched_yield(); /* another thread sets it up */
    gpupart_shim_ensure_callback(); /* the program's own masks are applied by the launch callback */
    return 0;
}


int gpupart_shim_is_active_copy(void) { return !g_inert; }


/* A forked child is another process: it must not count into, or remove, its parent's slot. */
static void after_fork_in_child(void) {
    gpupart_graphs_after_fork(); /* their locks may have been held by another thread at the fork */
    gpupart_devices_after_fork();
    gpupart_app_after_fork();
    gpupart_stream_path_after_fork();
    if (g_slot != &g_private) {
        memcpy(&g_private, g_slot, sizeof g_private);
        __atomic_store_n(&g_slot, &g_private, __ATOMIC_RELEASE);
    }
    g_slot_pid = 0;
}

__attribute__((constructor)) static void gpupart_shim_start(void) {
    g_inert = !gpupart_find_active_copy();
    if (g_inert) return; /* the other copy registers, subscribes and serves every call */
    pthread_atfork(NULL, NULL, after_fork_in_child);
    void* libcuda = gpupart_libcuda_if_loaded(); /* linked directly against libcuda: it is here already */
    if (libcuda != NULL) {
        gpupart_shim_setup_once(libcuda, 1);
        dlclose(libcuda); /* drop the reference RTLD_NOLOAD took */
    }
}

__attribute__((destructor)) static void gpupart_shim_stop(void) {
    if (g_slot_pid != 0 && g_slot_pid == getpid()) unlink(g_slot_path);
}
