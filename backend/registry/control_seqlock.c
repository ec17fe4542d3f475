/*
 * The seqlock of a slot's control block and of the status block's GPU entries, through memory: one
 * implementation for the shim (which reads the control block on its launch path) and the writers that map
 * a slot, following registry_seqlock.h's protocol. Declarations: control_seqlock.h.
 */
#include "control_seqlock.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "registry_seqlock.h"
#include "uuid_text.h"

/* Copies a control payload field by field with atomic loads and stores: the seqlock's payload accesses
 * (registry_seqlock.h). Used to read, write, save and restore; either side may be a private copy. */
static void payload_copy(struct gpupart_control_payload* to, const struct gpupart_control_payload* from) {
    gpupart_payload_store64(&to->generation, gpupart_payload_load64(&from->generation));
    gpupart_payload_store32(&to->count, gpupart_payload_load32(&from->count));
    gpupart_payload_store32((uint32_t*)&to->writer_pid, gpupart_payload_load32((const uint32_t*)&from->writer_pid));
    gpupart_payload_store32(&to->writer_uid, gpupart_payload_load32(&from->writer_uid));
    gpupart_payload_store64(&to->written_realtime_ns, gpupart_payload_load64(&from->written_realtime_ns));
    for (unsigned g = 0; g < GPUPART_MAX_GPUS; ++g) {
        struct gpupart_control_gpu* t = &to->gpus[g];
        const struct gpupart_control_gpu* f = &from->gpus[g];
        gpupart_payload_store32(&t->flags, gpupart_payload_load32(&f->flags));
        for (int i = 0; i < 4; ++i) {
            gpupart_payload_store32(&t->uuid.words[i], gpupart_payload_load32(&f->uuid.words[i]));
            gpupart_payload_store32(&t->allowed[i], gpupart_payload_load32(&f->allowed[i]));
            gpupart_payload_store32(&t->real_tpcs[i], gpupart_payload_load32(&f->real_tpcs[i]));
        }
    }
}

int gpupart_control_read(const struct gpupart_control* control, struct gpupart_control* copy, int tries) {
    for (int attempt = 0; attempt < tries; ++attempt) {
        const uint32_t begin = gpupart_seq_read_begin(&control->seq);
        copy->seq = begin;
        payload_copy(&copy->current, &control->current);
        if (!gpupart_seq_read_retry(&control->seq, begin)) {
            if (copy->current.count > GPUPART_MAX_GPUS) copy->current.count = GPUPART_MAX_GPUS; /* never trusted as an index */
            return 0;
        }
    }
    return -EAGAIN;
}

void gpupart_control_write(struct gpupart_control* control, const struct gpupart_control_payload* value) {
    /* The block being replaced is saved whole first (seq still even), for the successor of a writer that
     * dies below. A dead writer's odd seq is completed by restoring that saved block (gpupart_control_repair). */
    if ((__atomic_load_n(&control->seq, __ATOMIC_RELAXED) & 1u) != 0) gpupart_control_repair(control);
    payload_copy(&control->saved, &control->current);
    const uint32_t odd = gpupart_seq_write_begin(&control->seq);
    payload_copy(&control->current, value);
    gpupart_seq_write_end(&control->seq, odd);
    /* The shim's CUDA-graph re-mask thread sleeps on seq (a futex of the shared mapping): wake it. */
    syscall(SYS_futex, &control->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void gpupart_control_repair(struct gpupart_control* control) {
    const uint32_t seq = __atomic_load_n(&control->seq, __ATOMIC_RELAXED);
    if ((seq & 1u) == 0) return;
    payload_copy(&control->current, &control->saved);
    gpupart_seq_write_end(&control->seq, seq);
}

int gpupart_control_find(const struct gpupart_control_payload* payload, const struct gpupart_gpu_uuid* uuid) {
    const uint32_t count = payload->count < GPUPART_MAX_GPUS ? payload->count : GPUPART_MAX_GPUS;
    for (uint32_t i = 0; i < count; ++i)
        if (gpupart_uuid_equal(&payload->gpus[i].uuid, uuid)) return (int)i;
    return -1;
}

int gpupart_status_gpu_read(const struct gpupart_status_gpu* entry, struct gpupart_status_gpu* copy, int tries) {
    for (int attempt = 0; attempt < tries; ++attempt) {
        const uint32_t begin = gpupart_seq_read_begin(&entry->seq);
        copy->seq = begin;
        for (int i = 0; i < 4; ++i) {
            copy->uuid.words[i] = gpupart_payload_load32(&entry->uuid.words[i]);
            copy->applied[i] = gpupart_payload_load32(&entry->applied[i]);
        }
        copy->state = gpupart_payload_load32(&entry->state);
        copy->descriptor_version = gpupart_payload_load32(&entry->descriptor_version);
        copy->applied_generation = gpupart_payload_load64(&entry->applied_generation);
        copy->applied_flags = gpupart_payload_load32(&entry->applied_flags);
        if (!gpupart_seq_read_retry(&entry->seq, begin)) return 0;
    }
    return -EAGAIN;
}

void gpupart_status_gpu_write(struct gpupart_status_gpu* entry, const struct gpupart_status_gpu* value) {
    const uint32_t odd = gpupart_seq_write_begin(&entry->seq);
    gpupart_payload_store32(&entry->state, value->state);
    gpupart_payload_store32(&entry->descriptor_version, value->descriptor_version);
    gpupart_payload_store64(&entry->applied_generation, value->applied_generation);
    for (int i = 0; i < 4; ++i) gpupart_payload_store32(&entry->applied[i], value->applied[i]);
    gpupart_payload_store32(&entry->applied_flags, value->applied_flags);
    gpupart_seq_write_end(&entry->seq, odd);
}

int gpupart_control_has_real_tpc(const struct gpupart_control_gpu* control) {
    uint32_t usable = 0;
    for (int i = 0; i < 4; ++i) usable |= control->allowed[i] & control->real_tpcs[i];
    return usable != 0;
}
