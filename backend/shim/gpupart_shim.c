/*
 * libgpupart-shim.so: confines every kernel of an unmodified CUDA process to the TPCs its registry slot
 * allows, and follows changes to that slot while the process runs.
 *
 * How (HARDWARE.md section 1): the CUDA driver library has a tools-callback table; its "launch
 * descriptor about to be uploaded" callback lets us write the TPC disable mask into each kernel's
 * descriptor (QMD/TMD). Rules this file keeps:
 *  - A process that never loads libcuda is untouched: we only act once libcuda is loaded (already at
 *    start, or through dlopen, which we forward).
 *  - The launch path takes no lock, allocates nothing, makes no system call and never prints.
 *  - An unknown descriptor version is passed through untouched and reported in the slot, never guessed.
 *  - A mask with no real TPC is never applied (the kernel would wait forever).
 *  - Nothing here aborts the host: every failure is a status in the slot and one line on stderr at setup.
 * CUDA graphs, whose descriptors are built once at upload, are followed by gpupart_shim_graphs.c.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "registry_layout.h"
#include "registry_seqlock.h"
#include "registry_slot.h"
#include "shim_graphs.h"
#include "slot_guard.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- Launch descriptor layouts (HARDWARE.md section 1) ------------------------------------------- */
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

/* ---- The CUDA tools-callback table (HARDWARE.md section 1) --------------------------------------- */
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

/* Which GPU a launch is on. The launch callback runs in the launching thread with the launch's context
 * current, so cuCtxGetDevice gives the device ordinal (a driver call: no system call, no lock). Ordinals
 * are fixed for the life of the process (CUDA_VISIBLE_DEVICES is read once, at cuInit), so the ordinal
 * -> GPU entry map is process-wide and filled once per ordinal; keying by ordinal rather than by context
 * pointer also survives a context destroyed and another made at the same address on another GPU. */
typedef int (*ctx_get_device_fn)(int* device);
typedef int (*device_get_uuid_fn)(unsigned char uuid[16], int device);
static ctx_get_device_fn g_ctx_get_device;
static device_get_uuid_fn g_device_get_uuid;
#define MAX_ORDINALS 64
static int32_t g_ordinal_gpu[MAX_ORDINALS];         /* atomic: 0 not looked up, k > 0 status.gpus[k-1], -1 unknown */
static pthread_mutex_t g_gpu_lock = PTHREAD_MUTEX_INITIALIZER; /* the miss path only: once per ordinal */

/* Each launching thread keeps, per GPU, its own copy of that GPU's entry of the control block, so the hot
 * path reads only thread-local data plus the control block's sequence number. */
struct applied {
    uint32_t valid;
    uint32_t seen_seq;
    uint64_t generation;
    uint32_t has_mask;
    uint32_t disable[4];        /* descriptor disable mask: the complement of the allowed TPCs */
    uint32_t low64_usable;      /* allowed bits 0-63 include a real TPC (needed for 64-bit layouts) */
    uint32_t published_version; /* descriptor version this thread last published for this GPU */
    uint32_t publish_pending;   /* a publication lost its try-lock race: retry at the next launch */
    uint32_t refused;           /* the current control generation was refused (no real TPC) */
    uint32_t others_masked;     /* no mask for this GPU while the process has one for another GPU */
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
    a->published_version = version;
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
    value.applied_flags = a->has_mask ? GPUPART_CONTROL_HAS_MASK : 0u;
    for (int i = 0; i < 4; ++i) value.applied[i] = a->has_mask ? ~a->disable[i] : 0u;
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

/* Each GPU's real TPC bits as `gpupart run` or a profile rule gave them at start, when they did: a later
 * control block is checked against these too, not only against the real_tpcs its writer claims, so a
 * block rewritten by hand cannot leave the process allowed only on holes (a kernel that never runs). */
static struct gpupart_control_gpu g_known_real[GPUPART_MAX_GPUS];
static uint32_t g_known_real_count;

static int mask_usable(const struct gpupart_control_gpu* c) {
    if (!gpupart_control_has_real_tpc(c)) return 0;
    for (uint32_t k = 0; k < g_known_real_count; ++k) {
        if (!gpupart_uuid_equal(&g_known_real[k].uuid, &c->uuid)) continue;
        uint32_t usable = 0;
        for (int i = 0; i < 4; ++i) usable |= c->allowed[i] & g_known_real[k].real_tpcs[i];
        return usable != 0;
    }
    return 1;
}

/* The GPU entry index of device ordinal `device`, found once: its UUID from the driver, then the status
 * entry with that UUID, or a new one (the slot lists every GPU the process has a context on). -1 when
 * the driver cannot say or 16 GPUs are taken. Not on the common path: once per ordinal per process. */
static int resolve_ordinal(struct gpupart_slot_file* slot, int device) {
    unsigned char bytes[16];
    struct gpupart_gpu_uuid uuid;
    int found = -1;
    if (g_device_get_uuid == NULL || g_device_get_uuid(bytes, device) != 0) {
        __atomic_store_n(&g_ordinal_gpu[device], -1, __ATOMIC_RELEASE);
        return -1;
    }
    gpupart_uuid_from_bytes(bytes, &uuid);
    pthread_mutex_lock(&g_gpu_lock);
    uint32_t count = __atomic_load_n(&slot->status.gpu_count, __ATOMIC_ACQUIRE);
    if (count > GPUPART_MAX_GPUS) count = GPUPART_MAX_GPUS;
    for (uint32_t i = 0; i < count && found < 0; ++i) {
        struct gpupart_gpu_uuid seen;
        for (int w = 0; w < 4; ++w) seen.words[w] = gpupart_load32(&slot->status.gpus[i].uuid.words[w]);
        if (gpupart_uuid_equal(&seen, &uuid)) found = (int)i;
    }
    if (found < 0 && count < GPUPART_MAX_GPUS) {
        for (int w = 0; w < 4; ++w) gpupart_store32(&slot->status.gpus[count].uuid.words[w], uuid.words[w]);
        __atomic_store_n(&slot->status.gpu_count, count + 1, __ATOMIC_RELEASE);
        found = (int)count;
    }
    __atomic_store_n(&g_ordinal_gpu[device], found >= 0 ? found + 1 : -1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_gpu_lock);
    return found;
}

/* The status entry of the GPU this launch is on, or -1 when the driver does not say. */
static int launch_gpu(struct gpupart_slot_file* slot) {
    int device = -1;
    if (g_ctx_get_device == NULL || g_ctx_get_device(&device) != 0 || device < 0 || device >= MAX_ORDINALS) return -1;
    const int32_t cached = __atomic_load_n(&g_ordinal_gpu[device], __ATOMIC_ACQUIRE);
    if (cached > 0) return cached - 1;
    if (cached < 0) return -1;
    return resolve_ordinal(slot, device);
}

/* Reads the control block (bounded, never blocks) and adopts the entry for GPU `gpu` unless its mask has
 * no real TPC. A GPU without an entry runs unconfined (and says so when other GPUs have masks). */
static void refresh(struct applied* a, struct gpupart_slot_file* slot, int gpu, uint32_t version) {
    struct gpupart_control c;
    if (gpupart_control_read(&slot->control, &c, 4) != 0) return; /* a write is in progress: keep our mask */
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
    if (index >= 0 && (c.current.gpus[index].flags & GPUPART_CONTROL_HAS_MASK) != 0) {
        const struct gpupart_control_gpu* entry = &c.current.gpus[index];
        if (!mask_usable(entry)) { /* the kernel would never run: keep the previous mask, say so */
            gpupart_add64(&slot->counters.refused_masks, 1);
            a->refused = 1;
            publish_status(slot, gpu, GPUPART_SHIM_MASK_REFUSED, version, a);
            return;
        }
        a->refused = 0;
        a->has_mask = 1;
        for (int i = 0; i < 4; ++i) a->disable[i] = ~entry->allowed[i];
        a->low64_usable = ((entry->allowed[0] & entry->real_tpcs[0]) | (entry->allowed[1] & entry->real_tpcs[1])) != 0;
    } else {
        a->refused = 0;
        a->has_mask = 0;
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

/* The launch path: a size check, a pointer, a version byte, the device ordinal, a sequence compare and
 * 2-5 stores. */
static void on_launch(void* user, int domain, int cbid, const void* params) {
    (void)user;
    struct gpupart_slot_file* slot = __atomic_load_n(&g_slot, __ATOMIC_ACQUIRE);
    if (domain == GPUPART_DOMAIN_DRIVER_API) {
        gpupart_graphs_on_api(slot, cbid, params); /* graph calls: gpupart_shim_graphs.c */
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
    const int gpu = launch_gpu(slot);
    struct applied* a = &t_applied[gpu >= 0 ? gpu : (int)UNKNOWN_GPU];
    if (!a->valid || __atomic_load_n(&slot->control.seq, __ATOMIC_ACQUIRE) != a->seen_seq) refresh(a, slot, gpu, version);
    if (version != a->published_version || a->publish_pending) {
        publish_status(slot, gpu, state_of(a, version), version, a);
    }
    if (gpu >= 0) gpupart_add64(&slot->gpu_counters[gpu].launches, 1);
    if (!a->has_mask) return;
    const enum layout layout = layout_of(version);
    if (layout == LAYOUT_MASK128) {
        memcpy(desc + V04_MASK_OFFSET, a->disable, 4 * sizeof(uint32_t));
        uint32_t first;
        memcpy(&first, desc, sizeof first);
        first |= V04_ENABLE_BIT;
        memcpy(desc, &first, sizeof first);
    } else if (layout == LAYOUT_MASK64 && a->low64_usable) {
        memcpy(desc + V01_MASK_OFFSET, a->disable, 2 * sizeof(uint32_t));
    } else {
        return; /* unknown layout (or no real TPC within 64 bits): pass-through, the status says so */
    }
    gpupart_add64(&slot->counters.masked_launches, 1);
    if (gpu >= 0) gpupart_add64(&slot->gpu_counters[gpu].masked_launches, 1);
}

/* ---- Setup: once libcuda is in the process ---------------------------------------------------------- */
/* The command line with arguments joined by spaces, and the base name of argv[0] (what profile rules
 * call "exe"). */
static void read_command(char* out, size_t size, char* exe, size_t exe_size) {
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, out, size - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) n = 0;
    out[n] = '\0';
    const char* slash = strrchr(out, '/'); /* argv[0] ends at the first NUL */
    snprintf(exe, exe_size, "%s", slash != NULL ? slash + 1 : out);
    for (ssize_t i = 0; i + 1 < n; ++i)
        if (out[i] == '\0') out[i] = ' ';
}

/* A profile rule for this process, if `gpupart profile apply` armed one: this user's rules first, then
 * root's, each from that user's own (trusted) directory. A profile rule is stored resolved once per GPU
 * (same line, one UUID each): the process starts with the masks of every GPU of the first rule that
 * matches. Fills the control payload and says which rule in `start_rule`. */
static int control_from_rules(const char* root, const char* exe, const char* command, struct gpupart_control_payload* c,
                              char* start_rule, size_t start_rule_size) {
    static struct gpupart_rules_file rules; /* 16 KiB: not on the stack; setup runs once */
    const uint32_t uids[2] = {(uint32_t)getuid(), 0u};
    for (int i = 0; i < (uids[0] == 0 ? 1 : 2); ++i) {
        char user_dir[512];
        if (gpupart_user_dir(root, uids[i], 0, user_dir, sizeof user_dir) != 0) continue;
        if (gpupart_rules_read(user_dir, uids[i], &rules) != 0) continue;
        const int found = gpupart_rules_match(&rules, exe, command, (uint32_t)getuid());
        if (found < 0) continue;
        const struct gpupart_rule* first = &rules.rules[found];
        const uint32_t line = first->line;
        for (uint32_t r = (uint32_t)found; r < rules.count && r < GPUPART_RULES_MAX && c->count < GPUPART_MAX_GPUS; ++r) {
            const struct gpupart_rule* rule = &rules.rules[r];
            const int same_rule = rule->line == line && rule->match == first->match && rule->uid == first->uid &&
                                  memcmp(rule->exe, first->exe, sizeof rule->exe) == 0 &&
                                  memcmp(rule->cmdline, first->cmdline, sizeof rule->cmdline) == 0;
            if (!same_rule || gpupart_uuid_is_zero(&rule->gpu) || gpupart_control_find(c, &rule->gpu) >= 0) continue;
            struct gpupart_control_gpu* entry = &c->gpus[c->count++];
            entry->uuid = rule->gpu;
            entry->flags = GPUPART_CONTROL_HAS_MASK;
            memcpy(entry->allowed, rule->allowed, sizeof entry->allowed);
            memcpy(entry->real_tpcs, rule->real_tpcs, sizeof entry->real_tpcs);
        }
        if (c->count == 0) continue;
        c->generation = 1;
        c->writer_uid = uids[i];
        snprintf(start_rule, start_rule_size, "profile %.40s rule at line %u (uid %u)", rules.profile, line,
                 (unsigned)uids[i]);
        return 1;
    }
    return 0;
}

/* GPUPART_TPCS / GPUPART_REAL_TPCS into control entries; -1 (and nothing filled) if malformed or if a
 * GPU of GPUPART_TPCS has no real-TPC bits. */
static int control_from_environment(const char* tpcs, const char* real, struct gpupart_control_payload* c) {
    struct gpupart_gpu_uuid uuids[GPUPART_MAX_GPUS], real_uuids[GPUPART_MAX_GPUS];
    uint32_t masks[GPUPART_MAX_GPUS][4], real_masks[GPUPART_MAX_GPUS][4];
    const int count = gpupart_parse_gpu_masks(tpcs, uuids, masks, GPUPART_MAX_GPUS);
    const int real_count = gpupart_parse_gpu_masks(real, real_uuids, real_masks, GPUPART_MAX_GPUS);
    if (count <= 0 || real_count <= 0) return -1;
    for (int i = 0; i < count; ++i) {
        int r = 0;
        while (r < real_count && !gpupart_uuid_equal(&real_uuids[r], &uuids[i])) ++r;
        if (r == real_count) return -1;
        struct gpupart_control_gpu* entry = &c->gpus[i];
        entry->uuid = uuids[i];
        entry->flags = GPUPART_CONTROL_HAS_MASK;
        memcpy(entry->allowed, masks[i], sizeof entry->allowed);
        memcpy(entry->real_tpcs, real_masks[r], sizeof entry->real_tpcs);
    }
    c->count = (uint32_t)count;
    return 0;
}

/* The control block the process starts with: GPUPART_TPCS / GPUPART_REAL_TPCS (set by gpupart run),
 * else an armed profile rule, else none (registered, not partitioned until `gpupart set`). */
static void initial_control(const char* dir, const char* exe, const char* command, struct gpupart_control_payload* c,
                            char* start_rule, size_t start_rule_size) {
    memset(c, 0, sizeof *c);
    c->writer_pid = getpid();
    c->writer_uid = getuid();
    start_rule[0] = '\0';
    const char* tpcs = getenv(GPUPART_ENV_TPCS);
    if (tpcs == NULL || tpcs[0] == '\0') {
        if (dir != NULL) control_from_rules(dir, exe, command, c, start_rule, start_rule_size);
        return;
    }
    if (control_from_environment(tpcs, getenv(GPUPART_ENV_REAL_TPCS), c) != 0) {
        memset(c->gpus, 0, sizeof c->gpus);
        c->count = 0;
        g_initial_state = GPUPART_SHIM_BAD_ENVIRONMENT;
        fprintf(stderr, "gpupart-shim: %s or %s is not \"GPU-<uuid>=0x<mask>[;...]\" for the same GPUs: this process is "
                "not partitioned\n", GPUPART_ENV_TPCS, GPUPART_ENV_REAL_TPCS);
        return;
    }
    c->generation = 1;
    snprintf(start_rule, start_rule_size, "%s", GPUPART_ENV_TPCS);
}

static void register_process(void) {
    char root[256];
    char user_dir[512];
    char why[1024] = "";
    char command[GPUPART_COMMAND_BYTES];
    char exe[64];
    char start_rule[80];
    read_command(command, sizeof command, exe, sizeof exe);
    const int pid = getpid();
    int error = gpupart_registry_dir(root, sizeof root);
    /* A root named by $GPUPART_REGISTRY_DIR may be made here; /run/gpupart and /dev/shm are never made. */
    if (error == 0) error = gpupart_registry_root_check(root, getenv(GPUPART_ENV_REGISTRY_DIR) != NULL, why, sizeof why);
    if (error == 0) {
        error = gpupart_user_dir(root, (uint32_t)getuid(), 1, user_dir, sizeof user_dir);
        if (error != 0) snprintf(why, sizeof why, "cannot make this user's directory in %s (%s)", root, strerror(-error));
    } else if (why[0] == '\0') {
        snprintf(why, sizeof why, "registry %s: %s", root, strerror(-error));
    }
    static struct gpupart_control_payload initial; /* 1 KiB: setup runs once */
    initial_control(error == 0 ? root : NULL, exe, command, &initial, start_rule, sizeof start_rule);
    for (uint32_t i = 0; i < initial.count; ++i)
        if (gpupart_control_has_real_tpc(&initial.gpus[i])) g_known_real[g_known_real_count++] = initial.gpus[i];
    struct gpupart_slot_file* slot = NULL;
    if (error == 0) {
        error = gpupart_slot_create(user_dir, pid, gpupart_process_start_time(pid), getuid(), command, GPUPART_SHIM_VERSION,
                                    start_rule, getenv(GPUPART_ENV_JOB), &initial, &slot, g_slot_path, sizeof g_slot_path);
        if (error != 0) snprintf(why, sizeof why, "cannot register in %s (%s)", user_dir, strerror(-error));
    }
    if (error == 0) gpupart_slot_guard(slot); /* from here a truncated slot cannot kill this process */
    if (error != 0) {
        /* Keep the start masks, privately: confinement must not depend on the registry being usable. */
        fprintf(stderr, "gpupart-shim: %s: the start mask applies but cannot be changed or seen\n", why);
        gpupart_control_write(&g_private.control, &initial);
        slot = &g_private;
    } else {
        g_slot_pid = pid;
    }
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
}

/* The driver functions that tell a launch's GPU. Without them every launch is on an unknown GPU: it runs
 * unconfined and the slot says so (never another GPU's mask). */
static void find_device_functions(void* libcuda) {
    AS_FUNCTION(g_ctx_get_device, dlsym(libcuda, "cuCtxGetDevice"));
    AS_FUNCTION(g_device_get_uuid, dlsym(libcuda, "cuDeviceGetUuid_v2"));
    if (g_device_get_uuid == NULL) AS_FUNCTION(g_device_get_uuid, dlsym(libcuda, "cuDeviceGetUuid"));
    if (g_ctx_get_device == NULL || g_device_get_uuid == NULL)
        fprintf(stderr, "gpupart-shim: this CUDA driver does not say which GPU a launch is on: kernels are not partitioned\n");
}

static void setup_once(void* libcuda) {
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(&g_setup_state, &expected, 1u, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
    register_process();      /* the slot exists before the first callback can run */
    find_device_functions(libcuda);
    subscribe_launches(libcuda);
    if (g_initial_state != GPUPART_SHIM_WAITING) publish_process_state(g_slot, g_initial_state);
    __atomic_store_n(&g_setup_state, 2u, __ATOMIC_RELEASE);
}

static void* libcuda_if_loaded(void) { return dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW); }

typedef void* (*dlopen_fn)(const char*, int);

/* Forwards every dlopen; the first one after which libcuda is in the process sets the shim up. */
EXPORT void* dlopen(const char* file, int flags) {
    static dlopen_fn real_dlopen;
    dlopen_fn real = __atomic_load_n(&real_dlopen, __ATOMIC_ACQUIRE);
    if (real == NULL) {
        AS_FUNCTION(real, dlsym(RTLD_NEXT, "dlopen"));
        __atomic_store_n(&real_dlopen, real, __ATOMIC_RELEASE);
    }
    void* handle = real(file, flags);
    if (handle != NULL && file != NULL && strstr(file, "libcuda.so") != NULL &&
        __atomic_load_n(&g_setup_state, __ATOMIC_ACQUIRE) == 0 && (flags & RTLD_NOLOAD) == 0)
        setup_once(handle);
    return handle;
}

/* A forked child is another process: it must not count into, or remove, its parent's slot. */
static void after_fork_in_child(void) {
    gpupart_graphs_after_fork();
    pthread_mutex_init(&g_gpu_lock, NULL); /* another thread may have held it at the fork */
    if (g_slot != &g_private) {
        memcpy(&g_private, g_slot, sizeof g_private);
        __atomic_store_n(&g_slot, &g_private, __ATOMIC_RELEASE);
    }
    g_slot_pid = 0;
}

__attribute__((constructor)) static void gpupart_shim_start(void) {
    pthread_atfork(NULL, NULL, after_fork_in_child);
    void* libcuda = libcuda_if_loaded(); /* linked directly against libcuda: it is here already */
    if (libcuda != NULL) {
        setup_once(libcuda);
        dlclose(libcuda); /* drop the reference RTLD_NOLOAD took */
    }
}

__attribute__((destructor)) static void gpupart_shim_stop(void) {
    if (g_slot_pid != 0 && g_slot_pid == getpid()) unlink(g_slot_path);
}
