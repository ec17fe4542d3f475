/*
 * Reading and writing a slot's control block and the status block's GPU entries through memory, under
 * the seqlock of registry_seqlock.h; repairing the block a writer killed mid-write left.
 */
#ifndef GPUPART_CONTROL_SEQLOCK_H
#define GPUPART_CONTROL_SEQLOCK_H

#include "registry_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Seqlock read of a control block into a private copy (seq and current; count clamped to GPUPART_MAX_GPUS);
 * 0, or -EAGAIN if no consistent copy was seen in `tries` attempts (a write is in progress, or a writer
 * died mid-write). Never blocks. */
int gpupart_control_read(const struct gpupart_control* control, struct gpupart_control* copy, int tries);

/* Seqlock write of a control block through memory (slot creation, the demo worker, tests); front ends
 * write through pwrite (slot_file.cpp) with the same steps. The caller holds the file's OFD write lock.
 * Saves the payload it replaces in `saved` first, and repairs a dead writer's block before that; wakes the
 * threads waiting on seq after (control_wake.hpp says who waits). */
void gpupart_control_write(struct gpupart_control* control, const struct gpupart_control_payload* value);

/* Completes the block a writer killed mid-write left (seq odd) by restoring `saved`. The caller holds
 * the file's OFD write lock, so no live writer is in the middle of it. No-op when seq is even. */
void gpupart_control_repair(struct gpupart_control* control);

/* The index of `uuid`'s entry in a (privately read) payload, or -1. */
int gpupart_control_find(const struct gpupart_control_payload* payload, const struct gpupart_gpu_uuid* uuid);

/* Seqlock read/write of one GPU entry of the shim's status block; the writer holds entry->writer_busy.
 * The write leaves the entry's uuid alone (it is written once, before status.gpu_count covers it). */
int gpupart_status_gpu_read(const struct gpupart_status_gpu* entry, struct gpupart_status_gpu* copy, int tries);
void gpupart_status_gpu_write(struct gpupart_status_gpu* entry, const struct gpupart_status_gpu* value);

/* Nonzero if a GPU entry's allowed TPCs include a real one of that GPU: the rule the shim (and anything
 * that acts like it) applies before adopting a mask, since a kernel allowed only on holes never runs. */
int gpupart_control_has_real_tpc(const struct gpupart_control_gpu* control);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_CONTROL_SEQLOCK_H */
