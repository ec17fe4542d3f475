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

/* Each launching thread keeps its own copy of the control block it applies, so the hot path reads
 * only thread-local data plus the control block's sequence number. */
struct applied {
    uint32_t valid;
    uint32_t seen_seq;
    uint64_t generation;
    uint32_t has_mask;
    uint32_t disable[4];        /* descriptor disable mask: the complement of the allowed TPCs */
    uint32_t low64_usable;      /* allowed bits 0-63 include a real TPC (needed for 64-bit layouts) */
    uint32_t published_version; /* descriptor version this thread last published */
    uint32_t refused;           /* the current control generation was refused (no real TPC) */
};
static __thread struct applied t_applied __attribute__((tls_model("initial-exec")));

static uint64_t coarse_realtime_ns(void) {
    struct timespec now; /* CLOCK_REALTIME_COARSE is served by the vDSO: no system call */
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Publishes what this thread applies. Threads race for it with a try-lock: a loser simply skips,
 * because the winner publishes the same facts. */
static void publish_status(struct gpupart_slot_file* slot, uint32_t state, uint32_t version, const struct applied* a) {
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(&slot->status.writer_busy, &expected, 1u, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return;
    struct gpupart_status value;
    memset(&value, 0, sizeof value);
    value.state = state;
    value.descriptor_version = version;
    value.applied_generation = a->generation;
    value.applied_flags = a->has_mask ? GPUPART_CONTROL_HAS_MASK : 0u;
    for (int i = 0; i < 4; ++i) value.applied[i] = a->has_mask ? ~a->disable[i] : 0u;
    gpupart_status_write(&slot->status, &value);
    __atomic_store_n(&slot->status.writer_busy, 0u, __ATOMIC_RELEASE);
}

/* What a thread applying `a` to descriptors of `version` reports. A refused request stays reported
 * until the next control change; an unknown descriptor overrides it (nothing is partitioned at all). */
static uint32_t state_of(const struct applied* a, uint32_t version) {
    if (layout_of(version) == LAYOUT_UNKNOWN) return GPUPART_SHIM_UNSUPPORTED_DESCRIPTOR;
    return a->refused ? GPUPART_SHIM_MASK_REFUSED : GPUPART_SHIM_ACTIVE;
}

/* The GPU's real TPC bits as `gpupart run` or a profile rule gave them at start, when they did: a later
 * control block is checked against these too, not only against the real_tpcs its writer claims, so a
 * block rewritten by hand cannot leave the process allowed only on holes (a kernel that never runs). */
static uint32_t g_known_real[4];
static uint32_t g_known_real_set;

static int mask_usable(const struct gpupart_control* c) {
    if (!gpupart_control_has_real_tpc(c)) return 0;
    if (!g_known_real_set) return 1;
    uint32_t usable = 0;
    for (int i = 0; i < 4; ++i) usable |= c->allowed[i] & g_known_real[i];
    return usable != 0;
}

/* Reads the control block (bounded, never blocks) and adopts it unless its mask has no real TPC. */
static void refresh(struct applied* a, struct gpupart_slot_file* slot, uint32_t version) {
    struct gpupart_control c;
    if (gpupart_control_read(&slot->control, &c, 4) != 0) return; /* a write is in progress: keep our mask */
    a->seen_seq = c.seq;
    if (a->valid && c.generation == a->generation) return;
    a->valid = 1;
    a->generation = c.generation;
    if (c.flags & GPUPART_CONTROL_HAS_MASK) {
        if (!mask_usable(&c)) { /* the kernel would never run: keep the previous mask, say so */
            gpupart_add64(&slot->counters.refused_masks, 1);
            a->refused = 1;
            a->published_version = version;
            publish_status(slot, GPUPART_SHIM_MASK_REFUSED, version, a);
            return;
        }
        a->refused = 0;
        a->has_mask = 1;
        for (int i = 0; i < 4; ++i) a->disable[i] = ~c.allowed[i];
        a->low64_usable = ((c.allowed[0] & c.real_tpcs[0]) | (c.allowed[1] & c.real_tpcs[1])) != 0;
    } else {
        a->refused = 0;
        a->has_mask = 0;
    }
    if (slot != &g_private) gpupart_slot_guard_remember(&c); /* what a truncated slot is replaced with */
    a->published_version = version;
    publish_status(slot, state_of(a, version), version, a);
}

/* The launch path: a size check, a pointer, a version byte, a sequence compare and 2-5 stores. */
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
    struct applied* a = &t_applied;
    if (!a->valid || __atomic_load_n(&slot->control.seq, __ATOMIC_ACQUIRE) != a->seen_seq) refresh(a, slot, version);
    const enum layout layout = layout_of(version);
    if (version != a->published_version) {
        a->published_version = version;
        publish_status(slot, state_of(a, version), version, a);
    }
    if (!a->has_mask) return;
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
 * root's, each from that user's own (trusted) directory. Fills the control block and says which rule
 * in `start_rule`. */
static int control_from_rules(const char* root, const char* exe, const char* command, struct gpupart_control* c,
                              char* start_rule, size_t start_rule_size) {
    static struct gpupart_rules_file rules; /* 16 KiB: not on the stack; setup runs once */
    const uint32_t uids[2] = {(uint32_t)getuid(), 0u};
    for (int i = 0; i < (uids[0] == 0 ? 1 : 2); ++i) {
        char user_dir[512];
        if (gpupart_user_dir(root, uids[i], 0, user_dir, sizeof user_dir) != 0) continue;
        if (gpupart_rules_read(user_dir, uids[i], &rules) != 0) continue;
        const int found = gpupart_rules_match(&rules, exe, command, (uint32_t)getuid());
        if (found < 0) continue;
        const struct gpupart_rule* rule = &rules.rules[found];
        memcpy(c->allowed, rule->allowed, sizeof c->allowed);
        memcpy(c->real_tpcs, rule->real_tpcs, sizeof c->real_tpcs);
        c->flags = GPUPART_CONTROL_HAS_MASK;
        c->generation = 1;
        c->writer_uid = uids[i];
        snprintf(start_rule, start_rule_size, "profile %.40s rule at line %u (uid %u)", rules.profile, rule->line,
                 (unsigned)uids[i]);
        return 1;
    }
    return 0;
}

/* The control block the process starts with: GPUPART_TPCS / GPUPART_REAL_TPCS (set by gpupart run),
 * else an armed profile rule, else none (registered, not partitioned until `gpupart set`). */
static void initial_control(const char* dir, const char* exe, const char* command, struct gpupart_control* c,
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
    if (gpupart_parse_hex_mask(tpcs, c->allowed) != 0 || gpupart_parse_hex_mask(getenv(GPUPART_ENV_REAL_TPCS), c->real_tpcs) != 0) {
        memset(c->allowed, 0, sizeof c->allowed);
        g_initial_state = GPUPART_SHIM_BAD_ENVIRONMENT;
        fprintf(stderr, "gpupart-shim: %s or %s is not a hex mask: this process is not partitioned\n", GPUPART_ENV_TPCS,
                GPUPART_ENV_REAL_TPCS);
        return;
    }
    c->flags = GPUPART_CONTROL_HAS_MASK;
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
    struct gpupart_control initial;
    initial_control(error == 0 ? root : NULL, exe, command, &initial, start_rule, sizeof start_rule);
    if ((initial.flags & GPUPART_CONTROL_HAS_MASK) != 0 && gpupart_control_has_real_tpc(&initial)) {
        memcpy(g_known_real, initial.real_tpcs, sizeof g_known_real);
        g_known_real_set = 1;
    }
    struct gpupart_slot_file* slot = NULL;
    if (error == 0) {
        error = gpupart_slot_create(user_dir, pid, gpupart_process_start_time(pid), getuid(), command, GPUPART_SHIM_VERSION,
                                    start_rule, &initial, &slot, g_slot_path, sizeof g_slot_path);
        if (error != 0) snprintf(why, sizeof why, "cannot register in %s (%s)", user_dir, strerror(-error));
    }
    if (error == 0) gpupart_slot_guard(slot); /* from here a truncated slot cannot kill this process */
    if (error != 0) {
        /* Keep the start mask, privately: confinement must not depend on the registry being usable. */
        fprintf(stderr, "gpupart-shim: %s: the start mask applies but cannot be changed or seen\n", why);
        gpupart_control_write(&g_private.control, &initial);
        slot = &g_private;
    } else {
        g_slot_pid = pid;
    }
    struct applied none;
    memset(&none, 0, sizeof none);
    publish_status(slot, g_initial_state, 0, &none);
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

static void setup_once(void* libcuda) {
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(&g_setup_state, &expected, 1u, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
    register_process();      /* the slot exists before the first callback can run */
    subscribe_launches(libcuda);
    if (g_initial_state != GPUPART_SHIM_WAITING) {
        struct applied none;
        memset(&none, 0, sizeof none);
        publish_status(g_slot, g_initial_state, 0, &none);
    }
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
