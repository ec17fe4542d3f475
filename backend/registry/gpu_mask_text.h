/*
 * The mask text of the environment gpupart gives a process (GPUPART_TPCS, GPUPART_REAL_TPCS), parsed
 * strictly: the shim refuses malformed text instead of guessing.
 */
#ifndef GPUPART_GPU_MASK_TEXT_H
#define GPUPART_GPU_MASK_TEXT_H

#include <stdint.h>
#include "registry_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses "GPU-<uuid>=0x<mask>[;GPU-<uuid>=0x<mask>...]" (GPUPART_TPCS, GPUPART_REAL_TPCS) into at most
 * `max` entries; returns how many, or -EINVAL (malformed, empty, a GPU named twice, more than `max`). */
int gpupart_parse_gpu_masks(const char* text, struct gpupart_gpu_uuid uuids[], uint32_t masks[][4], int max);

/* Parses "0x..." (1..32 hex digits) into four words, lowest first; 0 or -EINVAL. */
int gpupart_parse_hex_mask(const char* text, uint32_t words[4]);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_GPU_MASK_TEXT_H */
