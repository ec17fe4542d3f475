/* The program's own masks: private for the launch path, published in the slot's app block (app_mask_state.h). */
#define _GNU_SOURCE
#include "app_mask_state.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "launch_stream.h"
#include "registry_seqlock.h"
#include "shim_core.h"

enum source { NONE, NEXT, STREAM, GLOBAL };

/* ---- Private state: written under g_lock inside the g_seq seqlock, read lock-free by launches -------- */
#define TABLE_SIZE 256u /* a power of two, above GPUPART_APP_STREAM_LIMIT so probes stay short */
struct stream_entry {
    uint64_t stream;
    uint32_t used;
    uint32_t shown;             /* index in slot->app.streams + 1; 0 = counted in streams_hidden */
    uint32_t disable[4];
    uint64_t born;              /* writers only: creation order, so the oldest hidden stream is shown first */
};
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_seq;
static uint32_t g_global_set;
static uint32_t g_global_disable[4];
static uint32_t g_stream_count;
static struct stream_entry g_streams[TABLE_SIZE];
static uint32_t g_in_use;              /* relaxed: the launch path's fast exit while the API was never used */
static uint32_t g_shown, g_hidden;     /* writers only */
static uint64_t g_births;              /* writers only */
/* Each GPU's numbering (status entry -> its GPC map's bit_of_tpc), release-stored once, never changed after:
 * the program's masks are TPC numbers and a launch needs its GPU's descriptor bits. */
static uint32_t g_map_known[GPUPART_MAX_GPUS];
static uint8_t g_bit_of_tpc[GPUPART_MAX_GPUS][128];

struct next_mask {
    uint32_t disable[4];
    uint8_t set;
};
static __thread struct next_mask t_next __attribute__((tls_model("initial-exec")));

/* The launching thread's last translation: masks change far less often than kernels launch, so a launch
 * with the same choice on the same GPU reuses the bits (no walk over the numbers). */
struct translation {
    uint32_t numbers[4];        /* a disable mask in TPC numbers */
    uint32_t bits[4];           /* the same in descriptor bits: holes and numbers past the GPU's TPCs disabled */
    int32_t gpu;                /* status entry + 1; 0 = none yet */
};
static __thread struct translation t_translation __attribute__((tls_model("initial-exec")));

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static uint32_t home_of(uint64_t stream) { return (uint32_t)((stream * 0x9e3779b97f4a7c15ull) >> 56) & (TABLE_SIZE - 1); }

static void copy_words(uint32_t to[4], const uint32_t* from) {
    for (int i = 0; i < 4; ++i) to[i] = gpupart_payload_load32(&from[i]);
}

/* ---- Launch path --------------------------------------------------------------------------------- */

/* The stream's mask (with its app.streams place) or else the global mask, from one consistent reading.
 * A writer stalled mid-change leaves NONE after the bounded retry: this launch runs on the operator's mask. */
static enum source read_shared(int have_stream, uint64_t stream, uint32_t disable[4], uint32_t* shown) {
    for (int attempt = 0; attempt < 256; ++attempt) {
        const uint32_t begin = gpupart_seq_read_begin(&g_seq);
        if ((begin & 1u) != 0) {
            cpu_relax();
            continue;
        }
        enum source found = NONE;
        if (have_stream && gpupart_payload_load32(&g_stream_count) != 0) {
            for (uint32_t i = home_of(stream), probes = 0; probes < TABLE_SIZE; ++probes, i = (i + 1) & (TABLE_SIZE - 1)) {
                const struct stream_entry* e = &g_streams[i];
                if (!gpupart_payload_load32(&e->used)) break;
                if (gpupart_payload_load64(&e->stream) != stream) continue;
                copy_words(disable, e->disable);
                *shown = gpupart_payload_load32(&e->shown);
                found = STREAM;
                break;
            }
        }
        if (found == NONE && gpupart_payload_load32(&g_global_set)) {
            copy_words(disable, g_global_disable);
            found = GLOBAL;
        }
        if (!gpupart_seq_read_retry(&g_seq, begin)) return found;
    }
    return NONE;
}

static enum source choose(uint32_t disable[4], uint32_t* shown) {
    uint64_t stream = 0;
    const int in_launch = gpupart_launch_stream_current(&stream);
    /* Followed launch calls tell launches from graph uploads: a next mask waits for a real launch. */
    if (t_next.set && (in_launch || !gpupart_launch_streams_followed())) {
        t_next.set = 0;
        memcpy(disable, t_next.disable, sizeof t_next.disable);
        return NEXT;
    }
    return read_shared(in_launch, stream, disable, shown);
}

/* The program's disable mask in TPC numbers as descriptor bits on status entry `gpu`; 0 when that GPU's
 * numbering is not known (no usable GPC map: the mask must not go in, it would name other TPCs). */
static int to_bits(int gpu, const uint32_t numbers[4], uint32_t bits[4]) {
    if (gpu < 0 || gpu >= (int)GPUPART_MAX_GPUS || !__atomic_load_n(&g_map_known[gpu], __ATOMIC_ACQUIRE)) return 0;
    struct translation* t = &t_translation;
    if (t->gpu != gpu + 1 || memcmp(t->numbers, numbers, sizeof t->numbers) != 0) {
        uint32_t allowed[4] = {0, 0, 0, 0};
        for (uint32_t k = 0; k < 128u; ++k) {
            const uint32_t bit = g_bit_of_tpc[gpu][k];
            if (bit == GPUPART_GPCS_NO_TPC) break; /* numbers are dense: the first missing one ends them */
            if ((numbers[k / 32u] & (1u << (k % 32u))) == 0) allowed[bit / 32u] |= 1u << (bit % 32u);
        }
        for (int i = 0; i < 4; ++i) {
            t->numbers[i] = numbers[i];
            t->bits[i] = ~allowed[i];
        }
        t->gpu = gpu + 1;
    }
    memcpy(bits, t->bits, sizeof t->bits);
    return 1;
}

static int operator_mask(const struct gpupart_bound* bound, uint32_t disable[4], uint32_t* low64_usable) {
    if (!bound->has_mask) return 0;
    memcpy(disable, bound->disable, sizeof bound->disable);
    *low64_usable = bound->low64_usable;
    return 1;
}

int gpupart_app_launch_mask(struct gpupart_slot_file* slot, int gpu, const struct gpupart_bound* bound, uint32_t disable[4],
                            uint32_t* low64_usable) {
    if (!__atomic_load_n(&g_in_use, __ATOMIC_RELAXED)) return operator_mask(bound, disable, low64_usable);
    uint32_t numbers[4], chosen[4];
    uint32_t shown = 0;
    const enum source source = choose(numbers, &shown);
    if (source == NONE) return operator_mask(bound, disable, low64_usable);
    gpupart_add64(&slot->app.app_launches, 1);
    if (source == NEXT) gpupart_add64(&slot->app.next_launches, 1);
    if (source == STREAM && shown > 0 && shown <= GPUPART_APP_STREAMS) gpupart_add64(&slot->app.streams[shown - 1].launches, 1);
    if (!to_bits(gpu, numbers, chosen)) { /* counted, and said once on stderr when the maps were read */
        gpupart_add64(&slot->app.unmapped_launches, 1);
        return operator_mask(bound, disable, low64_usable);
    }
    /* The translated choice holds only the GPU's real TPCs (the map's bits), so without an operator mask it
     * needs no further check against them. */
    uint32_t allowed[4];
    const uint32_t* real = bound->real;
    const int real_known = bound->real_known != 0;
    uint32_t usable = 0, usable_low = 0;
    for (int i = 0; i < 4; ++i) {
        allowed[i] = ~chosen[i] & (bound->has_mask ? ~bound->disable[i] : ~0u);
        const uint32_t here = allowed[i] & (real_known ? real[i] : ~0u);
        usable |= here;
        if (i < 2) usable_low |= here;
    }
    if (usable == 0) { /* nothing of the program's choice inside the bound (or on the GPU): never a kernel that cannot run */
        gpupart_add64(&slot->app.outside_bound, 1);
        return operator_mask(bound, disable, low64_usable);
    }
    for (int i = 0; i < 4; ++i) disable[i] = ~allowed[i];
    *low64_usable = usable_low != 0;
    return 1;
}

/* ---- Publication in the slot (writers hold g_lock) ---------------------------------------------- */

static void publish_locked(void) {
    struct gpupart_app_masks* app = &gpupart_shim_slot()->app;
    const uint32_t odd = gpupart_seq_write_begin(&app->seq);
    uint32_t flags = GPUPART_APP_IN_USE | GPUPART_APP_NUMBERED;
    if (g_global_set) flags |= GPUPART_APP_GLOBAL_SET;
    if (!gpupart_launch_streams_followed()) flags |= GPUPART_APP_STREAMS_UNFOLLOWED;
    gpupart_payload_store32(&app->flags, flags);
    gpupart_payload_store32(&app->stream_count, g_shown);
    gpupart_payload_store32(&app->streams_hidden, g_hidden);
    for (int i = 0; i < 4; ++i) gpupart_payload_store32(&app->global_disable[i], g_global_set ? g_global_disable[i] : 0u);
    for (uint32_t i = 0; i < TABLE_SIZE; ++i) {
        const struct stream_entry* e = &g_streams[i];
        if (!e->used || e->shown == 0) continue;
        struct gpupart_app_stream* shown = &app->streams[e->shown - 1];
        gpupart_payload_store64(&shown->stream, e->stream);
        for (int w = 0; w < 4; ++w) gpupart_payload_store32(&shown->disable[w], e->disable[w]);
    }
    for (uint32_t i = g_shown; i < GPUPART_APP_STREAMS; ++i) { /* places no stream holds now */
        gpupart_payload_store64(&app->streams[i].stream, 0);
        gpupart_store64(&app->streams[i].launches, 0);
        for (int w = 0; w < 4; ++w) gpupart_payload_store32(&app->streams[i].disable[w], 0);
    }
    gpupart_seq_write_end(&app->seq, odd);
}

void gpupart_app_republish(void) {
    pthread_mutex_lock(&g_lock);
    if (__atomic_load_n(&g_in_use, __ATOMIC_RELAXED)) publish_locked();
    pthread_mutex_unlock(&g_lock);
}

void gpupart_app_mark_in_use(void) {
    if (__atomic_load_n(&g_in_use, __ATOMIC_RELAXED)) return;
    pthread_mutex_lock(&g_lock);
    if (!__atomic_load_n(&g_in_use, __ATOMIC_RELAXED)) {
        __atomic_store_n(&g_in_use, 1u, __ATOMIC_RELAXED);
        publish_locked();
    }
    pthread_mutex_unlock(&g_lock);
}

/* ---- Setters ----------------------------------------------------------------------------------- */

void gpupart_app_set_global(const uint32_t disable[4]) {
    pthread_mutex_lock(&g_lock);
    const uint32_t odd = gpupart_seq_write_begin(&g_seq);
    for (int i = 0; i < 4; ++i) gpupart_payload_store32(&g_global_disable[i], disable[i]);
    gpupart_payload_store32(&g_global_set, 1u);
    gpupart_seq_write_end(&g_seq, odd);
    publish_locked();
    pthread_mutex_unlock(&g_lock);
}

void gpupart_app_set_next(const uint32_t disable[4]) {
    memcpy(t_next.disable, disable, sizeof t_next.disable);
    t_next.set = 1;
}

void gpupart_app_clear_next(void) { t_next.set = 0; }

/* The table place of `stream`, or of the empty place where it would go. */
static uint32_t place_of(uint64_t stream) {
    uint32_t i = home_of(stream);
    while (g_streams[i].used && g_streams[i].stream != stream) i = (i + 1) & (TABLE_SIZE - 1);
    return i;
}

static void store_entry(struct stream_entry* e, uint64_t stream, uint32_t used, uint32_t shown, const uint32_t disable[4]) {
    gpupart_payload_store64(&e->stream, stream);
    gpupart_payload_store32(&e->shown, shown);
    for (int w = 0; w < 4; ++w) gpupart_payload_store32(&e->disable[w], disable[w]);
    gpupart_payload_store32(&e->used, used);
}

int gpupart_app_set_stream(uint64_t stream, const uint32_t disable[4]) {
    pthread_mutex_lock(&g_lock);
    struct stream_entry* e = &g_streams[place_of(stream)];
    if (!e->used && g_stream_count >= GPUPART_APP_STREAM_LIMIT) {
        pthread_mutex_unlock(&g_lock);
        return ENOSPC;
    }
    uint32_t shown = e->shown;
    if (!e->used) {
        if (g_shown < GPUPART_APP_STREAMS) {
            shown = ++g_shown; /* a new place in the slot: its launch count starts at 0 */
            gpupart_store64(&gpupart_shim_slot()->app.streams[shown - 1].launches, 0);
        } else {
            shown = 0;
            ++g_hidden;
        }
    }
    const uint32_t odd = gpupart_seq_write_begin(&g_seq);
    if (!e->used) gpupart_payload_store32(&g_stream_count, g_stream_count + 1);
    if (!e->used) e->born = ++g_births;
    store_entry(e, stream, 1u, shown, disable);
    gpupart_seq_write_end(&g_seq, odd);
    publish_locked();
    pthread_mutex_unlock(&g_lock);
    return 0;
}

/* Shows the entry whose slot place is `last` at `place` instead (its launch count moves with it). A launch
 * that read the old place just before may still count there: one launch of that stream can be lost. */
static void move_shown(uint32_t last, uint32_t place) {
    struct gpupart_app_stream* streams = gpupart_shim_slot()->app.streams;
    for (uint32_t i = 0; i < TABLE_SIZE; ++i) {
        struct stream_entry* e = &g_streams[i];
        if (!e->used || e->shown != last) continue;
        gpupart_store64(&streams[place - 1].launches, gpupart_load64(&streams[last - 1].launches));
        gpupart_payload_store32(&e->shown, place);
        return;
    }
}

/* Gives the oldest hidden stream slot place `place` (a fresh launch count). Oldest, not first in the
 * table: table order follows stream addresses, so which stream appeared would change from run to run. */
static void show_hidden(uint32_t place) {
    struct stream_entry* oldest = NULL;
    for (uint32_t i = 0; i < TABLE_SIZE; ++i) {
        struct stream_entry* e = &g_streams[i];
        if (e->used && e->shown == 0 && (oldest == NULL || e->born < oldest->born)) oldest = e;
    }
    if (oldest == NULL) return;
    gpupart_store64(&gpupart_shim_slot()->app.streams[place - 1].launches, 0);
    gpupart_payload_store32(&oldest->shown, place);
    --g_hidden;
}

void gpupart_app_forget_stream(uint64_t stream) {
    if (!__atomic_load_n(&g_in_use, __ATOMIC_RELAXED)) return; /* no API call yet: no mask to forget */
    pthread_mutex_lock(&g_lock);
    uint32_t hole = place_of(stream);
    if (!g_streams[hole].used) {
        pthread_mutex_unlock(&g_lock);
        return;
    }
    const uint32_t shown = g_streams[hole].shown;
    const uint32_t odd = gpupart_seq_write_begin(&g_seq);
    const uint32_t none[4] = {0, 0, 0, 0};
    store_entry(&g_streams[hole], 0, 0u, 0u, none);
    /* Backward-shift deletion: entries whose probe passed the hole move back into it (no tombstones). */
    for (uint32_t j = (hole + 1) & (TABLE_SIZE - 1); g_streams[j].used; j = (j + 1) & (TABLE_SIZE - 1)) {
        const uint32_t home = home_of(g_streams[j].stream);
        if (((j - home) & (TABLE_SIZE - 1)) < ((j - hole) & (TABLE_SIZE - 1))) continue;
        store_entry(&g_streams[hole], g_streams[j].stream, 1u, g_streams[j].shown, g_streams[j].disable);
        g_streams[hole].born = g_streams[j].born;
        store_entry(&g_streams[j], 0, 0u, 0u, none);
        hole = j;
    }
    gpupart_payload_store32(&g_stream_count, g_stream_count - 1);
    if (shown == 0) {
        --g_hidden;
    } else {
        if (shown != g_shown) move_shown(g_shown, shown);
        --g_shown;
        if (g_hidden > 0) show_hidden(++g_shown);
    }
    gpupart_seq_write_end(&g_seq, odd);
    publish_locked();
    pthread_mutex_unlock(&g_lock);
}

void gpupart_app_learn_map(int gpu, const uint8_t bit_of_tpc[128]) {
    if (gpu < 0 || gpu >= (int)GPUPART_MAX_GPUS) return;
    pthread_mutex_lock(&g_lock);
    if (!__atomic_load_n(&g_map_known[gpu], __ATOMIC_RELAXED)) {
        memcpy(g_bit_of_tpc[gpu], bit_of_tpc, sizeof g_bit_of_tpc[gpu]);
        __atomic_store_n(&g_map_known[gpu], 1u, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_lock);
}

void gpupart_app_after_fork(void) { pthread_mutex_init(&g_lock, NULL); }
