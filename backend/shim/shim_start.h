/*
 * What the shim starts a process with (shim_start.c): its command line, and the control block its slot is
 * created with: GPUPART_TPCS / GPUPART_REAL_TPCS (set by `gpupart run`), else an armed profile rule, else
 * none (registered, not partitioned until `gpupart set`). Setup only, never on the launch path.
 */
#ifndef GPUPART_SHIM_START_H
#define GPUPART_SHIM_START_H

#include <stddef.h>
#include <stdint.h>

#include "registry_layout.h"

/* The command line with arguments joined by spaces, and the base name of argv[0] (what profile rules call "exe"). */
void gpupart_read_command(char* out, size_t size, char* exe, size_t exe_size);

/* Fills `c` and says where it came from in `start_rule`. `root` is the registry root (NULL when unusable:
 * no profile rules then). Returns GPUPART_SHIM_WAITING, or GPUPART_SHIM_BAD_ENVIRONMENT (after one line on
 * stderr) when the environment is malformed: the process then starts with no mask. */
uint32_t gpupart_start_control(const char* root, const char* exe, const char* command, struct gpupart_control_payload* c,
                               char* start_rule, size_t start_rule_size);

#endif /* GPUPART_SHIM_START_H */
