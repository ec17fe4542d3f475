/* Eager launches confined through the driver's per-stream TPC mask (stream_path.h). */
#define _GNU_SOURCE
#include "stream_path.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app_mask_state.h"
#include "registry_seqlock.h"
#include "shim_core.h"
#include "shim_devices.h"
#include "shim_graphs.h"
#include "uuid_text.h"

#define MAX_STREAMS 4096u                /* a power of two; more live streams go the callback path */
#define EMPTY_KEY 0u
#define GONE_KEY (~(uint64_t)0)          /* a destroyed stream's place: searches go on past it */
#define NO_SEQ 0u                        /* control sequence 0 is never written: "mask not written yet" */
#define COUNT_BATCH 64u                  /* launches a thread counts before adding them to the slot's counters */

/* What `gpupart run` said of the GPU (one: a run confines one GPU). */
static struct {
    struct gpupart_gpu_uuid uuid;
    uint32_t offset;                     /* of the mask field in the driver's stream object */
    uint32_t descriptor_version;         /* the probe's: what this GPU's status reports */
    uint8_t bit_of_tpc[128];             /* TPC number -> descriptor bit, GPUPART_GPCS_NO_TPC after the last */
} g_gpu;
static int g_on;

struct gpupart_stream_entry {
    uint64_t key;                        /* the CUstream handle (atomic) */
    int32_t gpu;                         /* its status entry */
    uint32_t seq;                        /* control sequence its mask was written for (atomic) */
    uint32_t masked;                     /* the field holds a mask (else: enable word 0, unconfined) */
    uint32_t writer;                     /* 1 while a thread rewrites the mask (atomic) */
    uint32_t inflight;                   /* launches on it between their check and the driver's return (atomic) */
    uint32_t counted;                    /* launches not yet added to the slot's counters (atomic) */
    uint32_t counted_masked;             /* of which with a mask (atomic) */
};
static struct gpupart_stream_entry g_streams[MAX_STREAMS];


static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The running driver's version is `version` ("580.159.04"): /proc/driver/nvidia/version names it. */
static int running_driver_is(const char* version) {
    char text[512];
    const char* file = getenv(GPUPART_ENV_DRIVER_VERSION_FILE);
    /* Never blocks (a FIFO) and reads one page at most; procfs files are not regular but are what we want. */
    const int fd = open(file != NULL && file[0] != '\0' ? file : "/proc/driver/nvidia/version", O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return 0;
    struct stat st;
    const ssize_t n = fstat(fd, &st) == 0 && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode) &&
                              !S_ISSOCK(st.st_mode)
                          ? read(fd, text, sizeof text - 1)
                          : -1;
    close(fd);
    if (n <= 0) return 0;
    text[n] = '\0';
    const size_t length = strlen(version);
    for (const char* at = strstr(text, version); at != NULL; at = strstr(at + 1, version)) {
        const char after = at[length];
        const char before = at == text ? ' ' : at[-1];
        if ((before == ' ' || before == '\t') && (after == ' ' || after == '\t' || after == '\n' || after == '\0')) return 1;
    }
    return 0;
}

/* <uuid>=<offset>,<driver>,<descriptor version>,<256 hex digits> */
static int parse(const char* value, char* driver, size_t driver_size) {
    const char* equals = strchr(value, '=');
    if (equals == NULL || (size_t)(equals - value) >= 64) return 0;
    char uuid_text[64];
    memcpy(uuid_text, value, (size_t)(equals - value));
    uuid_text[equals - value] = '\0';
    if (gpupart_uuid_parse(uuid_text, &g_gpu.uuid) != 40 || equals - value != 40) return 0;
    char* end = NULL;
    const unsigned long offset = strtoul(equals + 1, &end, 16);
    if (end == equals + 1 || *end != ',' || offset == 0 || offset > 0xffffu || offset % 4 != 0) return 0;
    g_gpu.offset = (uint32_t)offset;
    const char* comma = strchr(end + 1, ',');
    if (comma == NULL || comma == end + 1 || (size_t)(comma - end - 1) >= driver_size) return 0;
    memcpy(driver, end + 1, (size_t)(comma - end - 1));
    driver[comma - end - 1] = '\0';
    const unsigned long version = strtoul(comma + 1, &end, 16);
    if (end == comma + 1 || *end != ',' || version == 0 || version > 0xffu) return 0;
    g_gpu.descriptor_version = (uint32_t)version;
    const char* map = end + 1;
    if (strlen(map) != 256) return 0;
    int ended = 0;
    for (int k = 0; k < 128; ++k) {
        const int high = hex_digit(map[2 * k]), low = hex_digit(map[2 * k + 1]);
        if (high < 0 || low < 0) return 0;
        const int bit = high * 16 + low;
        if (bit == GPUPART_GPCS_NO_TPC) ended = 1;
        else if (ended || bit >= 128) return 0; /* numbers are dense: nothing after the first missing one */
        g_gpu.bit_of_tpc[k] = (uint8_t)bit;
    }
    return g_gpu.bit_of_tpc[0] != GPUPART_GPCS_NO_TPC;
}

int gpupart_stream_path_setup(void) {
    const char* path = getenv(GPUPART_ENV_LAUNCH_PATH);
    const char* value = getenv(GPUPART_ENV_STREAM_MASK);
    if (value == NULL || value[0] == '\0' || (path != NULL && strcmp(path, "callback") == 0)) return 0;
    char driver[64];
    if (!parse(value, driver, sizeof driver)) {
        fprintf(stderr, "gpupart-shim: %s is malformed: launches go through the driver's callback\n", GPUPART_ENV_STREAM_MASK);
        return 0;
    }
    if (!running_driver_is(driver)) return 0; /* verified on another driver: the field may have moved */
    __atomic_store_n(&g_on, 1, __ATOMIC_RELEASE);
    return 1;
}

int gpupart_stream_path_on(void) { return __atomic_load_n(&g_on, __ATOMIC_ACQUIRE); }

static uint32_t slot_of(uint64_t key) { return (uint32_t)(((key >> 4) * 0x9e3779b97f4a7c15ull) >> 52) & (MAX_STREAMS - 1); }

static struct gpupart_stream_entry* find(uint64_t stream) {
    const uint32_t start = slot_of(stream);
    for (uint32_t i = 0; i < MAX_STREAMS; ++i) {
        struct gpupart_stream_entry* e = &g_streams[(start + i) & (MAX_STREAMS - 1)];
        const uint64_t key = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
        if (key == stream) return e;
        if (key == EMPTY_KEY) return NULL;
    }
    return NULL;
}

/* The process's mask on this GPU as the stream field wants it: TPC numbers, a set bit keeps one out. */
static int stream_disable(int gpu, uint32_t* seq, uint32_t disable[4], int* has_mask) {
    struct gpupart_bound bound;
    if (!gpupart_shim_stream_bound(gpu, g_gpu.descriptor_version, seq, &bound)) return 0;
    *has_mask = bound.has_mask;
    for (int i = 0; i < 4; ++i) disable[i] = ~0u;
    for (int k = 0; k < 128 && g_gpu.bit_of_tpc[k] != GPUPART_GPCS_NO_TPC; ++k) {
        const int bit = g_gpu.bit_of_tpc[k];
        if ((bound.disable[bit / 32] & (1u << (bit % 32))) == 0) disable[k / 32] &= ~(1u << (k % 32));
    }
    return 1;
}

/* Writes the mask into the driver's stream object: the four words, then the enable word. */
static void write_field(uint64_t stream, const uint32_t disable[4], int has_mask) {
    char* object;
    memcpy(&object, (const void*)(uintptr_t)stream, sizeof object); /* a CUstream's first word: the driver's object */
    if (object == NULL) return;
    uint32_t* field = (uint32_t*)(object + g_gpu.offset);
    for (int i = 0; i < 4; ++i) __atomic_store_n(&field[1 + i], has_mask ? disable[i] : 0u, __ATOMIC_RELAXED);
    __atomic_store_n(&field[0], has_mask ? 1u : 0u, __ATOMIC_RELEASE);
}

/* Brings the stream's mask up to date: one writer at a time, and only while no launch on the stream is
 * between its check and the driver's return (the driver reads the field during the launch: a half-written
 * mask could allow no TPC at all). */
static void rewrite(struct gpupart_stream_entry* e, uint64_t stream) {
    uint32_t expected = 0;
    while (!__atomic_compare_exchange_n(&e->writer, &expected, 1u, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
        expected = 0;
        cpu_relax();
    }
    while (__atomic_load_n(&e->inflight, __ATOMIC_SEQ_CST) != 0) cpu_relax();
    uint32_t seq = NO_SEQ, disable[4];
    int has_mask = 0;
    if (stream_disable(e->gpu, &seq, disable, &has_mask)) {
        write_field(stream, disable, has_mask);
        __atomic_store_n(&e->masked, (uint32_t)has_mask, __ATOMIC_RELAXED);
        __atomic_store_n(&e->seq, seq, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&e->writer, 0u, __ATOMIC_SEQ_CST);
}

void gpupart_stream_path_created(uint64_t stream) {
    if (!gpupart_stream_path_on() || stream == 0) return;
    struct gpupart_slot_file* slot = gpupart_shim_slot();
    const int gpu = gpupart_devices_current_gpu(slot);
    if (gpu < 0 || gpu >= (int)GPUPART_MAX_GPUS) return;
    struct gpupart_gpu_uuid uuid;
    for (int w = 0; w < 4; ++w) uuid.words[w] = gpupart_load32(&slot->status.gpus[gpu].uuid.words[w]);
    if (memcmp(&uuid, &g_gpu.uuid, sizeof uuid) != 0) return; /* not the GPU the probe verified */
    const uint32_t start = slot_of(stream);
    for (uint32_t i = 0; i < MAX_STREAMS; ++i) {
        struct gpupart_stream_entry* e = &g_streams[(start + i) & (MAX_STREAMS - 1)];
        uint64_t key = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
        if (key != stream && key != EMPTY_KEY && key != GONE_KEY) continue;
        if (key != stream && !__atomic_compare_exchange_n(&e->key, &key, stream, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            continue; /* another thread took this place first: look further */
        }
        e->gpu = gpu;
        __atomic_store_n(&e->counted, 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&e->counted_masked, 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&e->seq, NO_SEQ, __ATOMIC_RELEASE);
        rewrite(e, stream); /* the stream starts with the mask: a launch before any change is confined too */
        return;
    }
}

void gpupart_stream_path_destroyed(uint64_t stream) {
    if (!gpupart_stream_path_on() || stream == 0) return;
    struct gpupart_stream_entry* e = find(stream);
    if (e != NULL) __atomic_store_n(&e->key, GONE_KEY, __ATOMIC_RELEASE);
}

/* Counted per stream, added to the slot's counters every COUNT_BATCH launches: one shared counter updated by
 * every launching thread would itself slow launches from many threads (no thread-local storage: the shim's
 * initial-exec TLS must stay small, gpupart_shim.c). */
static void count(struct gpupart_slot_file* slot, struct gpupart_stream_entry* e, int masked) {
    if (masked) __atomic_add_fetch(&e->counted_masked, 1u, __ATOMIC_RELAXED);
    if (__atomic_add_fetch(&e->counted, 1u, __ATOMIC_RELAXED) % COUNT_BATCH != 0) return;
    const uint32_t all = __atomic_exchange_n(&e->counted, 0u, __ATOMIC_RELAXED);
    const uint32_t with_mask = __atomic_exchange_n(&e->counted_masked, 0u, __ATOMIC_RELAXED);
    const int gpu = e->gpu;
    gpupart_add64(&slot->counters.launches, all);
    gpupart_add64(&slot->gpu_counters[gpu].launches, all);
    gpupart_add64(&slot->counters.masked_launches, with_mask);
    gpupart_add64(&slot->gpu_counters[gpu].masked_launches, with_mask);
    gpupart_store64(&slot->counters.last_launch_realtime_ns, gpupart_coarse_realtime_ns());
}

struct gpupart_stream_entry* gpupart_stream_path_before_launch(uint64_t stream) {
    if (!gpupart_stream_path_on() || stream <= 2u) return NULL; /* NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD */
    struct gpupart_stream_entry* e = find(stream);
    if (e == NULL) return NULL;
    struct gpupart_slot_file* slot = gpupart_shim_slot();
    /* One try per launch: a control block caught mid-write (or left so by a killed writer) keeps the mask
     * the stream has, as the callback path keeps its thread's. */
    if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != __atomic_load_n(&slot->control.seq, __ATOMIC_ACQUIRE)) rewrite(e, stream);
    for (;;) {
        __atomic_add_fetch(&e->inflight, 1u, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&e->writer, __ATOMIC_SEQ_CST) == 0) break;
        __atomic_sub_fetch(&e->inflight, 1u, __ATOMIC_SEQ_CST); /* another thread is rewriting: let it finish */
        while (__atomic_load_n(&e->writer, __ATOMIC_SEQ_CST) != 0) cpu_relax();
    }
    count(slot, e, (int)__atomic_load_n(&e->masked, __ATOMIC_RELAXED));
    return e;
}

void gpupart_stream_path_after_launch(struct gpupart_stream_entry* entry) {
    if (entry != NULL) __atomic_sub_fetch(&entry->inflight, 1u, __ATOMIC_RELEASE);
}

void gpupart_stream_path_after_fork(void) {
    memset(g_streams, 0, sizeof g_streams);
    __atomic_store_n(&g_on, 0, __ATOMIC_RELEASE);
}
