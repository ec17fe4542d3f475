/*
 * TEST DOUBLE of the CUDA driver: what its two files share (fake_libcuda.c: the callback table and plain
 * launches; fake_graphs.c: CUDA graphs). Internal to the test double: nothing here is exported.
 */
#ifndef GPUPART_FAKE_LIBCUDA_H
#define GPUPART_FAKE_LIBCUDA_H

#define FAKE_CUDA_DESCRIPTOR_BYTES 512
#define FAKE_CUDA_VERSION_OFFSET 72
#define FAKE_CUDA_DOMAIN_DRIVER_API 6
#define FAKE_CUDA_SM_WORDS 8 /* fake_cuda_last_sms: a bit set of 256 SMs */

#include <stdint.h>

/* Fills `descriptor` (FAKE_CUDA_DESCRIPTOR_BYTES) as the driver builds one, with `version`, and hands it
 * to the subscribed callback as "launch descriptor about to be uploaded". 1 if the callback ran. */
int fake_cuda_build_descriptor(unsigned version, unsigned char* descriptor);

/* The same for a launch on a stream whose mask field is `stream_field` (enable word, four disable words in TPC
 * numbers; NULL for a default stream): like the driver, a set enable word puts that mask into the descriptor
 * before the callback sees it (fake_cuda_stream_mask_to_descriptor, fake_launch.c). */
int fake_cuda_build_descriptor_on(unsigned version, unsigned char* descriptor, const uint32_t* stream_field);
void fake_cuda_stream_mask_to_descriptor(unsigned char* descriptor, const uint32_t stream_field[5]);

/* Hands a driver-API callback record to the subscribed callback if it enabled `cbid` in the driver-API
 * domain. 1 if the callback ran. */
int fake_cuda_api_callback(int cbid, const void* record);

/* The driver-API callback record as measured on driver 580 (u32 size at 0, CUresult* at 40, function name
 * at 48, parameter struct at 56, u32 site at 84), handed to fake_cuda_api_callback. */
#define FAKE_CUDA_SITE_ENTER 0u
#define FAKE_CUDA_SITE_EXIT 1u
#define FAKE_CUDA_NOT_YET 999 /* the result a record carries at enter */
int fake_cuda_api_record(int cbid, const char* name, void* params, int* result, uint32_t site);

/* Whether `stream` is a stream handle the process may launch into: NULL, CU_STREAM_LEGACY (1),
 * CU_STREAM_PER_THREAD (2) or a live stream of fake_launch.c. */
int fake_cuda_stream_valid(const void* stream);

#endif /* GPUPART_FAKE_LIBCUDA_H */
