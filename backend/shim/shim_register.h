/*
 * Registering the process in the registry once libcuda is in it (shim_register.c).
 */
#ifndef GPUPART_SHIM_REGISTER_H
#define GPUPART_SHIM_REGISTER_H

#include <stddef.h>
#include <stdint.h>

#include "registry_layout.h"

/* Makes the process's slot with its start mask (and guards it), writing its path to `slot_path` and the
 * process id that owns it to `*slot_pid`; sets `*initial_state` (enum gpupart_shim_state) from the start
 * mask. When no slot can be made, says why on stderr, writes the start mask into `private_slot` and
 * returns it: confinement never depends on the registry being usable. */
struct gpupart_slot_file* gpupart_shim_register(struct gpupart_slot_file* private_slot, char* slot_path, size_t slot_path_size,
                                                int* slot_pid, uint32_t* initial_state);

#endif /* GPUPART_SHIM_REGISTER_H */
