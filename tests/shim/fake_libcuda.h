/*
 * TEST DOUBLE of the CUDA driver: what its two files share (fake_libcuda.c: the callback table and plain
 * launches; fake_graphs.c: CUDA graphs). Internal to the test double: nothing here is exported.
 */
#ifndef GPUPART_FAKE_LIBCUDA_H
#define GPUPART_FAKE_LIBCUDA_H

#define FAKE_CUDA_DESCRIPTOR_BYTES 512
#define FAKE_CUDA_VERSION_OFFSET 72
#define FAKE_CUDA_DOMAIN_DRIVER_API 6

/* Fills `descriptor` (FAKE_CUDA_DESCRIPTOR_BYTES) as the driver builds one, with `version`, and hands it
 * to the subscribed callback as "launch descriptor about to be uploaded". 1 if the callback ran. */
int fake_cuda_build_descriptor(unsigned version, unsigned char* descriptor);

/* Hands a driver-API callback record to the subscribed callback if it enabled `cbid` in the driver-API
 * domain. 1 if the callback ran. */
int fake_cuda_api_callback(int cbid, const void* record);

#endif /* GPUPART_FAKE_LIBCUDA_H */
