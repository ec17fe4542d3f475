/*
 * What the libsmctrl API's two files share (smctrl_api.c: masks and errors; smctrl_info.c: TPC and GPC
 * information): the per-thread error message, the start of every call, and the GPUs' TPC numbering.
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

/* The numbering of CUDA device `ordinal` (its GPC map, own user directory, then root's): fills *tpc_count
 * and uuid_text (41 bytes) and returns 0, or an errno value with the thread's error naming `call` and the
 * command that writes the map. Once read, the map is remembered and handed to the launch path. */
int gpupart_api_numbering(const char* call, int ordinal, uint32_t* tpc_count, char* uuid_text);

/* Reads the GPC map of every CUDA device this process sees, once each, so launches on any of them can
 * translate the program's masks; one line on stderr for each device without a usable map, except
 * `reported` (the device whose error the caller returns itself; -1 for none). */
void gpupart_api_scan_maps(int reported);

#endif /* GPUPART_SMCTRL_COMMON_H */
