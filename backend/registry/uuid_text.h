/*
 * GPU UUIDs: comparing the registry's binary form, and converting it to and from the text NVML prints.
 */
#ifndef GPUPART_UUID_TEXT_H
#define GPUPART_UUID_TEXT_H

#include "registry_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GPU UUIDs (registry_layout.h). Text is "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML prints it. */
#define GPUPART_UUID_TEXT_BYTES 41
int gpupart_uuid_equal(const struct gpupart_gpu_uuid* a, const struct gpupart_gpu_uuid* b);
int gpupart_uuid_is_zero(const struct gpupart_gpu_uuid* uuid);
void gpupart_uuid_from_bytes(const unsigned char bytes[16], struct gpupart_gpu_uuid* uuid);
void gpupart_uuid_format(const struct gpupart_gpu_uuid* uuid, char out[GPUPART_UUID_TEXT_BYTES]);
/* Parses the 40 characters at `text` (more may follow); returns 40, or -EINVAL. */
int gpupart_uuid_parse(const char* text, struct gpupart_gpu_uuid* uuid);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_UUID_TEXT_H */
