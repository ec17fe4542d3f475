/*
 * A stand-in libnvidia-ml for the NVML source's tests: it exports only the oldest, unversioned symbol
 * names and the v1 process layout, so the loader's fallbacks are exercised, lacks the memory,
 * utilisation and clock calls (their facts must say so), and answers nvmlInit with $FAKE_NVML_INIT.
 * The real NVML is tested on the GPU machines.
 */
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

struct pci_info {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};
struct process_v1 {
    unsigned pid;
    unsigned long long used_gpu_memory;
};

static int the_device;

EXPORT int nvmlInit(void) {
    const char* code = getenv("FAKE_NVML_INIT");
    return code != NULL ? atoi(code) : 0;
}
EXPORT int nvmlShutdown(void) { return 0; }
EXPORT const char* nvmlErrorString(int result) {
    switch (result) {
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 9: return "Driver Not Loaded";
    default: return "Unknown Error";
    }
}
EXPORT int nvmlDeviceGetCount(unsigned* count) {
    *count = 1;
    return 0;
}
EXPORT int nvmlDeviceGetHandleByIndex(unsigned index, void** device) {
    if (index != 0) return 2;
    *device = &the_device;
    return 0;
}
EXPORT int nvmlDeviceGetName(void* device, char* name, unsigned length) {
    (void)device;
    strncpy(name, "Fake GPU", length);
    return 0;
}
EXPORT int nvmlDeviceGetUUID(void* device, char* uuid, unsigned length) {
    (void)device;
    strncpy(uuid, "GPU-00000000-1111-2222-3333-444444444444", length);
    return 0;
}
EXPORT int nvmlDeviceGetPciInfo(void* device, struct pci_info* pci) {
    (void)device;
    memset(pci, 0, sizeof *pci);
    strcpy(pci->bus_id, "00000000:17:00.0");
    return 0;
}
EXPORT int nvmlDeviceGetAttributes(void* device, void* attributes) {
    (void)device;
    (void)attributes;
    return 3; /* as on a non-MIG GPU */
}
EXPORT int nvmlDeviceGetMigMode(void* device, unsigned* current, unsigned* pending) {
    (void)device;
    (void)current;
    (void)pending;
    return 3;
}
EXPORT int nvmlDeviceGetComputeRunningProcesses(void* device, unsigned* count, struct process_v1* infos) {
    (void)device;
    if (*count < 2) {
        *count = 2;
        return 7; /* insufficient size */
    }
    *count = 2;
    infos[0].pid = 1;
    infos[0].used_gpu_memory = 512ull << 20;
    infos[1].pid = 4242;
    infos[1].used_gpu_memory = ~0ull; /* NVML_VALUE_NOT_AVAILABLE */
    return 0;
}
