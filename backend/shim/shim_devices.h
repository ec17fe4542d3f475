/*
 * Which GPU a launch is on, and what the shim knows of each GPU's real TPCs (shim_devices.c).
 *
 * The launch callback runs in the launching thread with the launch's context current, so cuCtxGetDevice
 * gives the device ordinal (a driver call: no system call, no lock). Ordinals are fixed for the life of the
 * process (CUDA_VISIBLE_DEVICES is read once, at cuInit), so the ordinal -> GPU entry map is process-wide
 * and filled once per ordinal; keying by ordinal rather than by context pointer also survives a context
 * destroyed and another made at the same address on another GPU.
 */
#ifndef GPUPART_SHIM_DEVICES_H
#define GPUPART_SHIM_DEVICES_H

#include <stdint.h>

#include "registry_layout.h"

#define GPUPART_MAX_ORDINALS 64

/* The driver functions the shim and the API call (NULL where this driver has none). */
struct gpupart_driver {
    int (*init)(unsigned flags);
    int (*ctx_get_device)(int* device);
    int (*device_get_uuid)(unsigned char uuid[16], int device);
    int (*device_get_count)(int* count);
    int (*device_get_attribute)(int* value, int attribute, int device);
};
extern struct gpupart_driver gpupart_cu;

/* Resolves gpupart_cu in `libcuda`; one line on stderr when a launch's GPU cannot be told. */
void gpupart_devices_setup(void* libcuda);

/* The status entry (index into slot->status.gpus) of device ordinal `ordinal`: found once per ordinal from
 * its UUID, a new entry if the slot lists no such GPU yet. -1 when the driver cannot say or 16 are taken. */
int gpupart_devices_gpu_of_ordinal(struct gpupart_slot_file* slot, int ordinal);

/* The status entry of the GPU the calling thread's current context is on, or -1 (launch path: after the
 * first launch per ordinal, two loads and a driver call). */
int gpupart_devices_current_gpu(struct gpupart_slot_file* slot);

/* The device ordinal of the calling thread's current context, or -1 without one. */
int gpupart_devices_current_ordinal(void);

/* Each GPU's real TPC bits as `gpupart run` or a profile rule gave them at start (setup only). */
void gpupart_devices_remember_real(const struct gpupart_control_gpu* start_entry);

/* Nonzero when `uuid`'s real TPCs are known from the start masks: fills real[4]. */
int gpupart_devices_known_real(const struct gpupart_gpu_uuid* uuid, uint32_t real[4]);

/* Whether a control entry's allowed TPCs include a real one, by its own real_tpcs and by the start's:
 * a block rewritten by hand cannot leave the process allowed only on holes (a kernel that never runs). */
int gpupart_devices_mask_usable(const struct gpupart_control_gpu* entry);

/* In a forked child: the lock may have been held by another thread at the fork. */
void gpupart_devices_after_fork(void);

#endif /* GPUPART_SHIM_DEVICES_H */
