/*
 * The masks the program chooses itself through the libsmctrl API (app_mask_state.c), kept privately for the
 * launch path and copied into the slot's `app` block for the front ends (docs/registry-layout-5.md,
 * decisions 2, 3 and 5). All masks here are libsmctrl's DISABLE masks, 128 bits as four words, in TPC
 * NUMBERS as the program gave them (libsmctrl's numbering: TPC k = SMs 2k and 2k+1), never descriptor bits:
 * each launch translates its mask through the GPC map of the GPU it runs on (cached per thread), then
 * combines it with the operator's mask, which is in descriptor bits.
 *
 * Per launch: the thread's next mask (used once), else the launch stream's mask, else the global mask, else
 * none. The launch runs on what both the program and the operator allow; when that holds no real TPC, on
 * the operator's mask alone (`app.outside_bound` counts it). With no operator mask the program's mask
 * applies alone (translated, it holds only the GPU's real TPCs).
 *
 * Setters run under the module's mutex and publish with a seqlock; the launch path reads with a bounded
 * retry, never locks, allocates or makes a system call.
 */
#ifndef GPUPART_APP_MASK_STATE_H
#define GPUPART_APP_MASK_STATE_H

#include <stdint.h>

#include "registry_layout.h"

#define GPUPART_APP_STREAM_LIMIT 192u /* stream masks held at once (the private table has 256 places) */

/* What the operator's control block allows on one GPU, as a launching thread applies it. */
struct gpupart_bound {
    uint32_t disable[4];        /* the operator's disable mask (when has_mask) */
    uint32_t real[4];
    uint8_t has_mask;
    uint8_t low64_usable;       /* its allowed bits 0-63 hold a real TPC (64-bit descriptors) */
    uint8_t real_known;         /* real[] holds the GPU's real TPC bits */
};

/* Launch path, in the launching thread: the mask for the descriptor being built on status entry `gpu` (-1
 * unknown). Fills disable[] and *low64_usable and returns 1 when a mask goes in, 0 for none. Consumes the
 * thread's next mask. Counts into slot->app. */
int gpupart_app_launch_mask(struct gpupart_slot_file* slot, int gpu, const struct gpupart_bound* bound, uint32_t disable[4],
                            uint32_t* low64_usable);

/* API side. Each publishes the slot's app block. */
void gpupart_app_mark_in_use(void);
void gpupart_app_set_global(const uint32_t disable[4]);
int gpupart_app_set_stream(uint64_t stream, const uint32_t disable[4]); /* 0, or ENOSPC when the table is full */
void gpupart_app_set_next(const uint32_t disable[4]);                   /* the calling thread's */
void gpupart_app_clear_next(void);                                      /* cancels the calling thread's */
void gpupart_app_forget_stream(uint64_t stream);                        /* the stream is being destroyed */
void gpupart_app_republish(void);                                       /* flags changed elsewhere */

/* The numbering of the GPU at status entry `gpu`: its GPC map's bit_of_tpc (checked by gpupart_gpcs_check).
 * Until it is known, launches there run without the program's masks (counted in app.unmapped_launches).
 * The first one learnt stays. */
void gpupart_app_learn_map(int gpu, const uint8_t bit_of_tpc[128]);

/* In a forked child: the lock may have been held by another thread at the fork. */
void gpupart_app_after_fork(void);

#endif /* GPUPART_APP_MASK_STATE_H */
