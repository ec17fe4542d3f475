/*
 * The registry's memory-ordering protocol, written once for the shim (C) and the front ends (C++).
 * A seqlock in the C11 form (Boehm, "Can seqlocks get along with programming language memory models?"):
 *   writer: seq odd (relaxed) ; release fence ; payload stores (relaxed) ; seq even (release)
 *   reader: seq (acquire) ; payload loads (relaxed) ; acquire fence ; seq again (relaxed) ; equal and even?
 * Payload fields are read and written with relaxed atomics, never with memcpy, so there is no data race
 * for TSan (or the compiler) to see. Mutual exclusion between writers is the caller's business.
 */
#ifndef GPUPART_REGISTRY_SEQLOCK_H
#define GPUPART_REGISTRY_SEQLOCK_H

#include <stdint.h>

static inline uint32_t gpupart_load32(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline uint64_t gpupart_load64(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void gpupart_store32(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline void gpupart_store64(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline void gpupart_add64(uint64_t* p, uint64_t v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }

/* Reader: returns the sequence to pass to gpupart_seq_read_retry (acquire: payload loads stay after it). */
static inline uint32_t gpupart_seq_read_begin(const uint32_t* seq) { return __atomic_load_n(seq, __ATOMIC_ACQUIRE); }

/* Reader: nonzero if the payload just read may be torn (a write was in progress or happened). */
static inline int gpupart_seq_read_retry(const uint32_t* seq, uint32_t begin) {
    __atomic_thread_fence(__ATOMIC_ACQUIRE); /* payload loads stay before the second read of seq */
    return (begin & 1u) != 0 || __atomic_load_n(seq, __ATOMIC_RELAXED) != begin;
}

/* Writer: makes seq odd and returns it. An already odd seq means an earlier writer died mid-write;
 * it stays odd and this writer completes the block. */
static inline uint32_t gpupart_seq_write_begin(uint32_t* seq) {
    uint32_t value = __atomic_load_n(seq, __ATOMIC_RELAXED);
    if ((value & 1u) == 0) value += 1u;
    __atomic_store_n(seq, value, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE); /* the odd seq is visible before any payload store */
    return value;
}

/* Writer: publishes the payload (release: payload stores stay before the even seq). */
static inline void gpupart_seq_write_end(uint32_t* seq, uint32_t odd) { __atomic_store_n(seq, odd + 1u, __ATOMIC_RELEASE); }

#endif /* GPUPART_REGISTRY_SEQLOCK_H */
