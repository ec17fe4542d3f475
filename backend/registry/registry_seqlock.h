/*
 * The registry's memory-ordering protocol, written once for the shim (C) and the front ends (C++).
 * A seqlock without fences (fences are invisible to ThreadSanitizer, so this form can be checked by it):
 *   writer: seq odd (relaxed) ; payload stores (release) ; seq even (release)
 *   reader: seq (acquire) ; payload loads (acquire) ; seq again (relaxed) ; equal and even?
 * Why it is enough: a reader that loads any payload value stored after the odd seq synchronizes with
 * that release store, so its later load of seq sees the odd value (or a later one) and it retries; the
 * acquire payload loads also keep the second seq load after them. On x86 these are plain moves.
 * Payload fields are never read or written with memcpy, so there is no data race for TSan or the
 * compiler to see. Mutual exclusion between writers is the caller's business.
 */
#ifndef GPUPART_REGISTRY_SEQLOCK_H
#define GPUPART_REGISTRY_SEQLOCK_H

#include <stdint.h>

/* Counters and other single fields that need atomicity but no ordering. */
static inline uint32_t gpupart_load32(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline uint64_t gpupart_load64(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void gpupart_store32(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline void gpupart_store64(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline void gpupart_add64(uint64_t* p, uint64_t v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }

/* Payload of a seqlock-published block. */
static inline uint32_t gpupart_payload_load32(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline uint64_t gpupart_payload_load64(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void gpupart_payload_store32(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void gpupart_payload_store64(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

/* Reader: returns the sequence to pass to gpupart_seq_read_retry. */
static inline uint32_t gpupart_seq_read_begin(const uint32_t* seq) { return __atomic_load_n(seq, __ATOMIC_ACQUIRE); }

/* Reader: nonzero if the payload just read may be torn (a write was in progress or happened). */
static inline int gpupart_seq_read_retry(const uint32_t* seq, uint32_t begin) {
    return (begin & 1u) != 0 || __atomic_load_n(seq, __ATOMIC_RELAXED) != begin;
}

/* Writer: makes seq odd and returns it. An already odd seq means an earlier writer died mid-write;
 * it stays odd and this writer completes the block. */
static inline uint32_t gpupart_seq_write_begin(uint32_t* seq) {
    uint32_t value = __atomic_load_n(seq, __ATOMIC_RELAXED);
    if ((value & 1u) == 0) value += 1u;
    __atomic_store_n(seq, value, __ATOMIC_RELAXED);
    return value;
}

/* Writer: publishes the payload (release: payload stores stay before the even seq). */
static inline void gpupart_seq_write_end(uint32_t* seq, uint32_t odd) { __atomic_store_n(seq, odd + 1u, __ATOMIC_RELEASE); }

#endif /* GPUPART_REGISTRY_SEQLOCK_H */
