/*
 * The gpupart registry layout: the only contract between the preloaded shim (C) and every front end.
 *
 * Directories. The registry root is $GPUPART_REGISTRY_DIR, else /run/gpupart if it exists (made by the
 * package's tmpfiles line: root:gpupart, mode 3777), else /dev/shm. A root is used only if it is a real
 * directory (not a symlink) owned by root or by the user using it, and sticky when others may write it:
 * whoever owns the root can rename or remove what is in it.
 * Inside the root every user has a directory of their own, "u<uid>" (in /dev/shm: "gpupart-u<uid>"),
 * owned by that user, mode 0755 (02755 under a setgid root: the slots in it get the root's group, so
 * its admin group may write them). Nobody else can add, replace, truncate-by-rename or remove anything in it. If another
 * user squatted the name, the user's directory is "u<uid>.<random>" instead; readers trust a user
 * directory only when its owner is the uid in its name and nobody but that user (and the admin group of
 * a setgid root) may write it, and trust a file in it only when that user owns it.
 *
 * Each partitioned CUDA process owns one fixed-size slot file (8 KiB: one mask per GPU, up to 16 GPUs, and the
 * masks the program chose itself through libgpupart.so) in its user's directory, named
 * "<pid>-<start time>.slot", created by the shim (under a random temporary name, then renamed) with mode
 * 0644 (0664 under a setgid root). One file per process, not one shared file, because only then can the
 * kernel enforce who may change what: the owner, root and the admin group may write it, everybody may
 * read it. The shim survives its slot being truncated (slot_guard.h); front ends never map slots, they
 * read and write them with pread/pwrite, so a truncated slot is an error message, never a SIGBUS.
 *
 * Concurrency:
 *  - header: written once by the shim before `state` is set LIVE with a release store; immutable after.
 *  - control: written by controllers (gpupart set) that hold an OFD write lock on the user directory's
 *    "writers.lock" (mode 0600, 0660 under a setgid root: only the slots' writers can open it, so no
 *    reader's lock can keep them out; released by the kernel if the writer dies) and then, unless a
 *    reader's read lock is in the way, on the slot file too (the marker readers look for), and publish
 *    through the `seq` seqlock; read lock-free by the shim. The shim makes "writers.lock" with the slot.
 *    Before making `seq` odd a writer saves the block it replaces in `saved`. A writer killed after that
 *    leaves `seq` odd and `saved` whole: readers keep what they had (the shim) or read `saved` (front
 *    ends, once no live writer holds the lock), and the next writer, holding the lock, first restores
 *    `saved` (seq even again), then compares generations and writes. A writer killed while saving left
 *    `seq` even and the block intact. So any store of any writer may be its last.
 *  - status: written by the shim only. Each GPU entry has its own `seq` and try-lock among the process's
 *    threads; an entry's uuid is written once before the release store of `gpu_count` that covers it.
 *  - counters: written by the shim with relaxed atomic adds, read relaxed.
 * Every field shared between processes is accessed with __atomic builtins (registry_seqlock.h) or with
 * pread/pwrite separated by fences, never with plain loads and stores.
 *
 * Any change to this layout bumps GPUPART_REGISTRY_LAYOUT_VERSION; readers refuse other versions.
 */
#ifndef GPUPART_REGISTRY_LAYOUT_H
#define GPUPART_REGISTRY_LAYOUT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUPART_REGISTRY_MAGIC "gpupart"  /* 8 bytes with the NUL */
/* 2: CUDA-graph counters; 3: per-user directories, control.saved; 4: one mask per GPU (docs/registry-layout-4.md);
 * 5: the program's own masks (libgpupart.so), GPC map files, SMLP components (docs/registry-layout-5.md) */
#define GPUPART_REGISTRY_LAYOUT_VERSION 5u
#define GPUPART_SLOT_FILE_SIZE 8192u
#define GPUPART_SLOT_SUFFIX ".slot"
#define GPUPART_COMMAND_BYTES 1024u
#define GPUPART_MAX_GPUS 16u                     /* GPUs one process may have masks for or contexts on */
#define GPUPART_USER_DIR_PREFIX "u"              /* "<root>/u<uid>" */
#define GPUPART_SHM_ROOT "/dev/shm"
#define GPUPART_SHM_USER_DIR_PREFIX "gpupart-u"  /* "/dev/shm/gpupart-u<uid>" */
#define GPUPART_RULES_FILE "rules"               /* "<user dir>/rules" */
#define GPUPART_WRITERS_LOCK_FILE "writers.lock" /* "<user dir>/writers.lock": see below */

/* Environment understood by the shim (set by `gpupart run`). GPUs are named by UUID, as NVML and
 * `nvidia-smi -L` print them, because CUDA device ordinals change with CUDA_VISIBLE_DEVICES:
 *   GPUPART_TPCS="GPU-<uuid>=0x<allowed>[;GPU-<uuid>=0x<allowed>...]"
 *   GPUPART_REAL_TPCS="GPU-<uuid>=0x<real TPC bits>[;...]"   (every GPU of GPUPART_TPCS, once)
 * A GPU the process uses but that has no mask runs unconfined, and the slot says so. */
#define GPUPART_ENV_REGISTRY_DIR "GPUPART_REGISTRY_DIR"
#define GPUPART_ENV_TPCS "GPUPART_TPCS"
#define GPUPART_ENV_REAL_TPCS "GPUPART_REAL_TPCS"
/* The stream path (shim/stream_path.h): "<GPU uuid>=<offset hex>,<driver version>,<descriptor version hex>,<bit_of_tpc:
 * 256 hex digits>", set by `gpupart run` where the probe verified the driver's stream mask; "callback" in
 * GPUPART_LAUNCH_PATH keeps a process on the launch callback alone. */
#define GPUPART_ENV_STREAM_MASK "GPUPART_STREAM_MASK"
#define GPUPART_ENV_LAUNCH_PATH "GPUPART_LAUNCH_PATH"
#define GPUPART_ENV_GRAPH_REMASK "GPUPART_GRAPH_REMASK" /* "ahead" (default) or "at-launch": when graph execs are re-masked */
#define GPUPART_ENV_JOB "GPUPART_JOB"           /* layout 5: copied into header.job (scheduler job id) */

enum gpupart_slot_state {
    GPUPART_SLOT_INITIALISING = 0,
    GPUPART_SLOT_LIVE = 1,
};

/* gpupart_control_gpu.flags */
#define GPUPART_CONTROL_HAS_MASK 0x1u /* 0: no partition on this GPU, the process may use every TPC */

/* What the shim is doing: status.state for the process, status.gpus[i].state for one GPU. */
enum gpupart_shim_state {
    GPUPART_SHIM_WAITING = 0,            /* registered, no kernel launched yet */
    GPUPART_SHIM_ACTIVE = 1,             /* masks are applied to launches */
    GPUPART_SHIM_UNSUPPORTED_DESCRIPTOR = 2, /* descriptor version not in the shim's table: pass-through */
    GPUPART_SHIM_CALLBACK_FAILED = 3,    /* CUDA's callback table could not be used: pass-through */
    GPUPART_SHIM_MASK_REFUSED = 4,       /* the requested mask has no real TPC: previous mask kept */
    GPUPART_SHIM_BAD_ENVIRONMENT = 5,    /* GPUPART_TPCS / GPUPART_REAL_TPCS malformed: no mask applied */
    GPUPART_SHIM_NO_MASK_FOR_GPU = 6,    /* (per GPU) the process has masks for other GPUs, none for this one: unconfined here */
    GPUPART_SHIM_GPU_UNKNOWN = 7,        /* (per GPU) the driver did not say which GPU launched: unconfined */
};

/* Immutable after the slot is published (state LIVE). 256 bytes. */
struct gpupart_slot_header {
    char magic[8];                 /* GPUPART_REGISTRY_MAGIC */
    uint32_t layout_version;       /* GPUPART_REGISTRY_LAYOUT_VERSION */
    uint32_t file_size;            /* GPUPART_SLOT_FILE_SIZE */
    uint32_t state;                /* enum gpupart_slot_state; atomic, set LIVE last */
    int32_t pid;
    uint32_t uid;
    uint32_t reserved0;
    uint64_t start_time;           /* field 22 of /proc/PID/stat: with pid, names the process */
    uint64_t created_realtime_ns;
    char shim_version[32];         /* NUL-terminated */
    char start_rule[80];           /* where the start mask came from: "" (none), "GPUPART_TPCS", "profile P rule N (uid U)" */
    char job[64];                  /* layout 5: the scheduler job the process belongs to, from $GPUPART_JOB at start
                                      ("slurm:<job>.<step>" from the SPANK plugin); "" if none. Printable ASCII only. */
    uint8_t reserved1[256 - 224];
};

/* A GPU's UUID: the 16 bytes of cuDeviceGetUuid_v2 (NVML prints them "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"),
 * in byte order, kept in words so every shared field is a 32- or 64-bit atomic. All zero: no GPU. */
struct gpupart_gpu_uuid {
    uint32_t words[4];
};

/* One GPU's mask in the control block. 64 bytes. */
struct gpupart_control_gpu {
    struct gpupart_gpu_uuid uuid;
    uint32_t flags;                /* GPUPART_CONTROL_HAS_MASK */
    uint32_t reserved0;
    uint32_t allowed[4];           /* allowed TPCs (set bit = may run there), bit 0 lowest */
    uint32_t real_tpcs[4];         /* that GPU's real TPC bits as the writer knew them */
    uint32_t reserved1[2];
};

/* What a change writes, whole. One generation for the whole process: a change of one GPU's mask is a
 * compare-and-set of the process's block, so two operators changing two GPUs of one process serialise.
 * A GPU with no entry (or an entry without HAS_MASK) is unconfined on that GPU. 1088 bytes. */
struct gpupart_control_payload {
    uint64_t generation;           /* +1 on every change */
    uint32_t count;                /* gpus[] entries in use (0..GPUPART_MAX_GPUS), each a distinct UUID */
    int32_t writer_pid;
    uint32_t writer_uid;
    uint32_t reserved0;
    uint64_t written_realtime_ns;
    uint32_t reserved1[8];
    struct gpupart_control_gpu gpus[GPUPART_MAX_GPUS];
};

/* Written by controllers under the file's OFD lock; seqlock-published. Before making `seq` odd a writer
 * copies `current` into `saved` (see "Concurrency" above). 2240 bytes. */
struct gpupart_control {
    uint32_t seq;                  /* odd while a write is in progress */
    uint32_t reserved[15];
    struct gpupart_control_payload current;
    struct gpupart_control_payload saved;
};

/* One GPU the process has a context on, as the shim applies it; seqlock-published by its own `seq`,
 * written under its own try-lock `writer_busy` among the process's threads. 64 bytes. */
struct gpupart_status_gpu {
    uint32_t seq;
    uint32_t writer_busy;
    struct gpupart_gpu_uuid uuid;  /* written once, before status.gpu_count covers the entry */
    uint32_t state;                /* enum gpupart_shim_state */
    uint32_t descriptor_version;   /* last launch descriptor version byte seen on this GPU */
    uint64_t applied_generation;   /* control generation the shim applies on this GPU (0 = initial) */
    uint32_t applied[4];           /* mask written into this GPU's descriptors now */
    uint32_t applied_flags;        /* GPUPART_CONTROL_HAS_MASK when a mask is applied */
    uint32_t reserved;
};

/* Written by the shim only. 1088 bytes. */
struct gpupart_status {
    uint32_t state;                /* enum gpupart_shim_state for the whole process (atomic): WAITING until the
                                      first launch, ACTIVE after, or CALLBACK_FAILED / BAD_ENVIRONMENT */
    uint32_t gpu_count;            /* gpus[] entries in use; release-stored after the new entry's uuid */
    uint32_t launch_path;          /* enum gpupart_launch_path (atomic); 0 from shims that predate it */
    uint32_t reserved[13];
    struct gpupart_status_gpu gpus[GPUPART_MAX_GPUS];
};

/* How the shim confines the process's kernels, published in status.launch_path (docs/launch-path.md). */
enum gpupart_launch_path {
    GPUPART_LAUNCH_PATH_NOT_SAID = 0,       /* a shim that predates the field, or libcuda not loaded yet */
    GPUPART_LAUNCH_PATH_CALLBACK = 1,       /* the driver's launch callback writes every kernel's descriptor */
    GPUPART_LAUNCH_PATH_STREAMS = 2,        /* each stream's own mask, verified by the probe; no callback */
    GPUPART_LAUNCH_PATH_STREAMS_AND_CALLBACK = 3, /* streams' masks, and the callback since a launch needed it */
};

/* Whether the shim follows the process's CUDA graphs, published in counters.graph_tracking. */
enum gpupart_graph_tracking {
    GPUPART_GRAPHS_NOT_YET = 0,        /* libcuda not loaded yet */
    GPUPART_GRAPHS_FOLLOWED = 1,       /* graph execs are re-masked at their first launch after a change */
    GPUPART_GRAPHS_UNAVAILABLE = 2,    /* the driver refused the graph-call callbacks: graphs keep their upload mask */
    GPUPART_GRAPHS_LAYOUT_UNKNOWN = 3, /* the driver's callback record is not the measured one: no longer followed */
};

/* ---- Layout 5: masks the program chooses itself through libgpupart.so (docs/api.md) -------------------
 * A program linked against libgpupart.so (the libsmctrl API) picks masks for its own kernels: a global
 * one, one per stream, one for the next launch of a thread. The library applies them UNDER the process's
 * gpupart mask (the control block): a launch runs on (program's allowed TPCs) AND (operator's allowed
 * TPCs); when that has no real TPC, the launch runs on the operator's mask alone and `outside_bound`
 * counts it. The masks are kept privately for the launch path and copied here for the front ends.
 * Written only by the process itself (its API calls, under a process-local mutex), seqlock-published by
 * `seq`; the counters after `reserved` are relaxed atomics outside the seqlock.
 * Masks are DISABLE masks as libsmctrl defines them (set bit = TPC not used), bit k = TPC number k
 * (GPUPART_APP_NUMBERED; descriptor bits in slots of shims that predate it). */
#define GPUPART_APP_STREAMS 64u           /* stream masks shown; more are applied, counted in streams_hidden */
#define GPUPART_APP_IN_USE 0x1u           /* app.flags: the program called the API at least once */
#define GPUPART_APP_GLOBAL_SET 0x2u       /* app.flags: a global mask is set (else: every TPC) */
#define GPUPART_APP_NUMBERED 0x8u         /* app.flags: the masks are TPC numbers as the program gave them (libsmctrl's
                                             numbering: TPC k = SMs 2k and 2k+1); without it (shims before the
                                             numbering), descriptor bits */
#define GPUPART_APP_STREAMS_UNFOLLOWED 0x4u /* app.flags: the driver does not say which stream a launch is on
                                             (callbacks refused, or a record layout not the measured one): stream
                                             masks are not applied, and set_stream_mask fails */

struct gpupart_app_stream {        /* 32 bytes */
    uint64_t stream;               /* the CUstream handle (0: the legacy default stream) */
    uint32_t disable[4];
    uint64_t launches;             /* launches on this stream that used its mask (relaxed) */
};

struct gpupart_app_masks {         /* 2112 bytes */
    uint32_t seq;
    uint32_t flags;                /* GPUPART_APP_* */
    uint32_t stream_count;         /* streams[] entries in use (0..GPUPART_APP_STREAMS) */
    uint32_t streams_hidden;       /* streams with a mask that did not fit in streams[] */
    uint32_t global_disable[4];
    /* relaxed counters, outside the seqlock */
    uint64_t unmapped_launches;    /* of app_launches, those whose GPU had no usable GPC map: TPC numbers without
                                      descriptor bits, so they ran on the operator's mask (a reserved 0 in slots
                                      of shims before GPUPART_APP_NUMBERED) */
    uint64_t app_launches;         /* launches whose mask the program chose (global, stream or next) */
    uint64_t next_launches;        /* ... of which from a next-launch mask */
    uint64_t outside_bound;        /* ... whose choice had no TPC inside the operator's mask: ran on the operator's */
    struct gpupart_app_stream streams[GPUPART_APP_STREAMS];
};

/* Relaxed atomic counters, written by the shim only. 128 bytes. The graph fields are written together
 * under the shim's graph lock but read one by one: a reader may briefly see a count from just before a
 * change next to one from after it. */
struct gpupart_counters {
    uint64_t launches;             /* kernel descriptors the callback saw */
    uint64_t masked_launches;      /* ... into which a mask was written */
    uint64_t last_launch_realtime_ns;
    uint64_t errors;               /* callbacks with parameters the shim could not use */
    uint64_t refused_masks;        /* control updates refused (no real TPC) */
    uint64_t graph_tracking;       /* enum gpupart_graph_tracking */
    uint64_t graph_generation;     /* the control generation graph_current refers to */
    uint64_t graph_execs;          /* live graph execs of the process */
    uint64_t graph_current;        /* ... whose kernels carry the mask of graph_generation (or get it at upload) */
    uint64_t graph_unfollowable;   /* ... the shim cannot re-mask (conditional bodies, lost nodes, refused toggles) */
    uint64_t graph_device_launch;  /* ... instantiated for device launch: re-masked only when the host launches or uploads them */
    uint64_t graph_remasks;        /* graph execs re-masked so far */
    uint64_t graph_remask_failures;/* re-masks the driver refused so far */
    uint64_t graph_launches;       /* cuGraphLaunch calls of the process (the driver's enter callback) */
    /* The two words below were reserved (zero) in the first layout-5 shims, and zero still means what it
     * meant then: no re-mask thread, nothing to wait for. */
    uint64_t graph_remasker;       /* 1 while a thread of the shim re-masks graph execs ahead of their replay */
    uint64_t graph_settled_generation; /* the control generation that thread last finished a pass at */
};

/* Per-GPU launch counters, same index as status.gpus (relaxed atomics). 32 bytes. */
struct gpupart_gpu_counters {
    uint64_t launches;
    uint64_t masked_launches;
    uint64_t applied_realtime_ns;  /* when the shim adopted the current control generation on this GPU: at
                                      the first launch there after a change (0: never) */
    uint64_t reserved;
};

struct gpupart_slot_file {
    struct gpupart_slot_header header;   /* offset 0 */
    struct gpupart_control control;      /* offset 256 */
    struct gpupart_status status;        /* offset 2496 */
    struct gpupart_counters counters;    /* offset 3584 */
    struct gpupart_gpu_counters gpu_counters[GPUPART_MAX_GPUS]; /* offset 3712 */
    char command[GPUPART_COMMAND_BYTES]; /* offset 4224: immutable, args joined by spaces, NUL-terminated */
    struct gpupart_app_masks app;        /* offset 5248: layout 5, the program's own masks */
    uint8_t reserved[GPUPART_SLOT_FILE_SIZE - 5248 - sizeof(struct gpupart_app_masks)];
};

/*
 * Profile rules for processes that start later: "<user dir>/rules", written by `gpupart profile apply`
 * of that user, read by the shim when it registers a process that `gpupart run` gave no mask. A shim
 * reads only its own user's rules file and root's, only from trusted user directories, and only regular
 * files that the directory's owner really owns.
 * Writers hold an OFD write lock and write with pwrite; readers take an OFD read lock and pread, so no
 * reader ever sees half a table (nothing here is read on the launch path).
 */
#define GPUPART_RULES_MAGIC "gprules"  /* 8 bytes with the NUL */
#define GPUPART_RULES_MAX 32u
#define GPUPART_RULE_MATCH_EXE 0x1u      /* base name of argv[0] equals `exe` */
#define GPUPART_RULE_MATCH_CMDLINE 0x2u  /* fnmatch(cmdline, the command line, 0) == 0 */
#define GPUPART_RULE_MATCH_UID 0x4u      /* the process's uid equals `uid` */

struct gpupart_rule {              /* 512 bytes */
    uint32_t match;                /* GPUPART_RULE_MATCH_* that must all hold (never 0) */
    uint32_t uid;
    uint32_t reserved0;
    uint32_t line;                 /* the rule's line in its profile, for the slot's start_rule */
    struct gpupart_gpu_uuid gpu;   /* the GPU this resolved mask is for (never all zero) */
    uint32_t allowed[4];           /* resolved against that GPU's floorplan when the profile was applied */
    uint32_t real_tpcs[4];
    char exe[64];
    char cmdline[384];
};

struct gpupart_rules_file {
    char magic[8];                 /* GPUPART_RULES_MAGIC */
    uint32_t layout_version;       /* GPUPART_REGISTRY_LAYOUT_VERSION */
    uint32_t file_size;            /* sizeof(struct gpupart_rules_file) */
    uint32_t count;
    uint32_t owner_uid;
    uint64_t written_realtime_ns;
    char profile[64];              /* the profile's name */
    uint8_t reserved[128 - 96];
    struct gpupart_rule rules[GPUPART_RULES_MAX];
};

/*
 * A GPU's TPC-to-GPC map, for programs that partition themselves (libgpupart.so: libsmctrl_get_gpc_info,
 * the SMLP's GPC-packed grants) and cannot read the GPU's topology themselves: "<user dir>/GPU-<uuid>.gpcs",
 * written whole (temporary name, then rename; mode 0644) by gpupart commands that read the live topology
 * (`gpupart run`, `gpupart topology`, `gpupart gpcs --write`). Readers take their own user's file, then
 * root's, only from trusted user directories, only regular files the directory's owner owns, of exactly
 * this size and layout.
 */
#define GPUPART_GPCS_MAGIC "gpgpcs\0"     /* 8 bytes with the NULs (the two-NUL form: "gpgpcs" alone is 7) */
#define GPUPART_GPCS_SUFFIX ".gpcs"
#define GPUPART_MAX_GPCS 32u

struct gpupart_gpcs_file {         /* 768 bytes */
    char magic[8];                 /* GPUPART_GPCS_MAGIC */
    uint32_t layout_version;       /* GPUPART_REGISTRY_LAYOUT_VERSION */
    uint32_t file_size;            /* sizeof(struct gpupart_gpcs_file) */
    struct gpupart_gpu_uuid uuid;
    uint32_t gpc_count;            /* GPCs with at least one TPC, in gpupart's order (physical GPC order) */
    uint32_t tpc_count;            /* real TPCs */
    uint64_t written_realtime_ns;
    uint32_t real_tpcs[4];         /* every real TPC's bit */
    char source[32];               /* where the map came from: "probe", "rm", "nvdebug", ... */
    uint8_t reserved[128 - 96];
    uint32_t gpc_tpcs[GPUPART_MAX_GPCS][4]; /* each GPC's TPC bits (disjoint, union = real_tpcs) */
    /* The driver's TPC numbering (TPC k = SMs 2k and 2k+1, as libsmctrl and %smid count): the descriptor bit
     * of TPC k for k < tpc_count, each a bit of real_tpcs and no two alike; GPUPART_GPCS_NO_TPC after. Added
     * after layout 5's first release: a map without it is 640 bytes, and readers refuse that size. */
    uint8_t bit_of_tpc[128];
};
#define GPUPART_GPCS_NO_TPC 0xffu

#ifdef __cplusplus
#define GPUPART_STATIC_ASSERT static_assert
#else
#define GPUPART_STATIC_ASSERT _Static_assert
#endif
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_slot_header) == 256, "header is 256 bytes");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_control_gpu) == 64, "a control entry is 64 bytes");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_control_payload) == 1088, "a control payload is 1088 bytes");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_control) == 2240, "control is 2240 bytes");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_control, current) == 64, "the payload follows seq");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_status_gpu) == 64, "a status entry is 64 bytes");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_status) == 1088, "status is 1088 bytes");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_counters) == 128, "counters are one 128-byte block");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_slot_file) == GPUPART_SLOT_FILE_SIZE, "slot file is two pages");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_slot_file, control) == 256, "control offset");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_slot_file, status) == 2496, "status offset");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_slot_file, counters) == 3584, "counters offset");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_slot_file, gpu_counters) == 3712, "gpu counters offset");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_gpu_counters) == 32, "GPU counters are 32 bytes");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_slot_file, command) == 4224, "command offset");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_rule) == 512, "a rule is 512 bytes");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_app_stream) == 32, "an app stream entry is 32 bytes");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_app_masks) == 2112, "the app block is 2112 bytes");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_slot_file, app) == 5248, "app offset");
GPUPART_STATIC_ASSERT(sizeof(struct gpupart_gpcs_file) == 768, "a GPC map file is 768 bytes");
GPUPART_STATIC_ASSERT(sizeof(GPUPART_GPCS_MAGIC) == 8 && sizeof(GPUPART_RULES_MAGIC) == 8 &&
                      sizeof(GPUPART_REGISTRY_MAGIC) == 8, "magics fill their 8 bytes (memcmp reads all 8)");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_gpcs_file, gpc_tpcs) == 128, "GPC masks follow a 128-byte header");
GPUPART_STATIC_ASSERT(__builtin_offsetof(struct gpupart_rules_file, rules) == 128, "rules follow a 128-byte header");

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_REGISTRY_LAYOUT_H */
