/* Which GPU a launch is on, and each GPU's known real TPCs (shim_devices.h). */
#define _GNU_SOURCE
#include "shim_devices.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "registry_seqlock.h"
#include "registry_slot.h"

struct gpupart_driver gpupart_cu;

static int32_t g_ordinal_gpu[GPUPART_MAX_ORDINALS];         /* atomic: 0 not looked up, k > 0 status.gpus[k-1], -1 unknown */
static pthread_mutex_t g_gpu_lock = PTHREAD_MUTEX_INITIALIZER; /* the miss path only: once per ordinal */
static struct gpupart_control_gpu g_known_real[GPUPART_MAX_GPUS];
static uint32_t g_known_real_count;                          /* written at setup, before any launch */

/* POSIX returns functions as object pointers; ISO C forbids the cast, so copy the bits. */
static void resolve(void* libcuda, const char* name, void* function_pointer) {
    void* found = dlsym(libcuda, name);
    memcpy(function_pointer, &found, sizeof found);
}

void gpupart_devices_setup(void* libcuda) {
    resolve(libcuda, "cuInit", &gpupart_cu.init);
    resolve(libcuda, "cuCtxGetDevice", &gpupart_cu.ctx_get_device);
    resolve(libcuda, "cuDeviceGetUuid_v2", &gpupart_cu.device_get_uuid);
    if (gpupart_cu.device_get_uuid == NULL) resolve(libcuda, "cuDeviceGetUuid", &gpupart_cu.device_get_uuid);
    resolve(libcuda, "cuDeviceGetCount", &gpupart_cu.device_get_count);
    resolve(libcuda, "cuDeviceGetAttribute", &gpupart_cu.device_get_attribute);
    if (gpupart_cu.ctx_get_device == NULL || gpupart_cu.device_get_uuid == NULL)
        fprintf(stderr, "gpupart-shim: this CUDA driver does not say which GPU a launch is on: kernels are not partitioned\n");
}

/* Not on the common path: once per ordinal per process. */
static int resolve_ordinal(struct gpupart_slot_file* slot, int device) {
    unsigned char bytes[16];
    struct gpupart_gpu_uuid uuid;
    int found = -1;
    if (gpupart_cu.device_get_uuid == NULL || gpupart_cu.device_get_uuid(bytes, device) != 0) {
        __atomic_store_n(&g_ordinal_gpu[device], -1, __ATOMIC_RELEASE);
        return -1;
    }
    gpupart_uuid_from_bytes(bytes, &uuid);
    pthread_mutex_lock(&g_gpu_lock);
    uint32_t count = __atomic_load_n(&slot->status.gpu_count, __ATOMIC_ACQUIRE);
    if (count > GPUPART_MAX_GPUS) count = GPUPART_MAX_GPUS;
    for (uint32_t i = 0; i < count && found < 0; ++i) {
        struct gpupart_gpu_uuid seen;
        for (int w = 0; w < 4; ++w) seen.words[w] = gpupart_load32(&slot->status.gpus[i].uuid.words[w]);
        if (gpupart_uuid_equal(&seen, &uuid)) found = (int)i;
    }
    if (found < 0 && count < GPUPART_MAX_GPUS) {
        for (int w = 0; w < 4; ++w) gpupart_store32(&slot->status.gpus[count].uuid.words[w], uuid.words[w]);
        __atomic_store_n(&slot->status.gpu_count, count + 1, __ATOMIC_RELEASE);
        found = (int)count;
    }
    __atomic_store_n(&g_ordinal_gpu[device], found >= 0 ? found + 1 : -1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_gpu_lock);
    return found;
}

int gpupart_devices_gpu_of_ordinal(struct gpupart_slot_file* slot, int ordinal) {
    if (ordinal < 0 || ordinal >= GPUPART_MAX_ORDINALS) return -1;
    const int32_t cached = __atomic_load_n(&g_ordinal_gpu[ordinal], __ATOMIC_ACQUIRE);
    if (cached > 0) return cached - 1;
    if (cached < 0) return -1;
    return resolve_ordinal(slot, ordinal);
}

int gpupart_devices_current_ordinal(void) {
    int device = -1;
    if (gpupart_cu.ctx_get_device == NULL || gpupart_cu.ctx_get_device(&device) != 0) return -1;
    return device >= 0 && device < GPUPART_MAX_ORDINALS ? device : -1;
}

int gpupart_devices_current_gpu(struct gpupart_slot_file* slot) {
    const int device = gpupart_devices_current_ordinal();
    return device < 0 ? -1 : gpupart_devices_gpu_of_ordinal(slot, device);
}

void gpupart_devices_remember_real(const struct gpupart_control_gpu* start_entry) {
    if (g_known_real_count < GPUPART_MAX_GPUS && gpupart_control_has_real_tpc(start_entry))
        g_known_real[g_known_real_count++] = *start_entry;
}

int gpupart_devices_known_real(const struct gpupart_gpu_uuid* uuid, uint32_t real[4]) {
    for (uint32_t k = 0; k < g_known_real_count; ++k) {
        if (!gpupart_uuid_equal(&g_known_real[k].uuid, uuid)) continue;
        memcpy(real, g_known_real[k].real_tpcs, 4 * sizeof(uint32_t));
        return 1;
    }
    return 0;
}

int gpupart_devices_mask_usable(const struct gpupart_control_gpu* entry) {
    if (!gpupart_control_has_real_tpc(entry)) return 0;
    uint32_t real[4];
    if (!gpupart_devices_known_real(&entry->uuid, real)) return 1;
    uint32_t usable = 0;
    for (int i = 0; i < 4; ++i) usable |= entry->allowed[i] & real[i];
    return usable != 0;
}

void gpupart_devices_after_fork(void) { pthread_mutex_init(&g_gpu_lock, NULL); }
