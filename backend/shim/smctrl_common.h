/*
 * What the libsmctrl API's two files share (smctrl_api.c: masks and errors; smctrl_info.c: TPC and GPC
 * information): the per-thread error message, the start of every call, and the GPUs' real TPCs.
 */
#ifndef GPUPART_SMCTRL_COMMON_H
#define GPUPART_SMCTRL_COMMON_H

#include <stdint.h>

#define GPUPART_API __attribute__((visibility("default")))

/* Records "libgpupart: <call>: <message>" as this thread's last error and returns `code`. */
int gpupart_api_fail(int code, const char* call, const char* format, ...) __attribute__((format(printf, 3, 4)));

/* Starts API call `call`: clears the thread's error; with `setup`, sets the library up (loading the CUDA
 * driver when the program has not yet) and marks the process as using the API. 0 or an errno value. */
int gpupart_api_begin(const char* call, int setup);

/* "0x..." for a 128-bit mask (no leading zeros). */
void gpupart_api_mask_text(const uint32_t words[4], char out[40]);

/* The real TPC bits of CUDA device `ordinal` when the library knows them: from `gpupart run`'s start masks,
 * the operator's control block, or the GPU's GPC map (own user directory, then root's). Fills real[] and
 * uuid_text (41 bytes) and returns 1, else 0. Remembered per ordinal once found. */
int gpupart_api_real_tpcs(int ordinal, uint32_t real[4], char* uuid_text);

#endif /* GPUPART_SMCTRL_COMMON_H */
