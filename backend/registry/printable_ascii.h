/*
 * Text sanitising: strings another process chose (a job name from its environment) keep only printable
 * ASCII, so no escape code reaches a terminal or a log through the registry.
 */
#ifndef GPUPART_PRINTABLE_ASCII_H
#define GPUPART_PRINTABLE_ASCII_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copies the printable ASCII characters (0x20-0x7e) of `text` into `out` (NUL-terminated, at most
 * `size` - 1 of them); everything else is dropped. What header.job may hold (registry_layout.h). */
void gpupart_printable_ascii(const char* text, char* out, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* GPUPART_PRINTABLE_ASCII_H */
