/*
 * A stand-in libnvidia-ml for the GPU meters (backend/sources/gpu_meters.hpp): a current NVML's versioned
 * names and the v2 process layout, two GPUs, and every meter call. Values come from FAKE_NVML_* variables
 * so that a test changes them between reads; FAKE_NVML_POWER=refuse answers "Not Supported" as a GPU without
 * a power sensor does. The real NVML is read on the GPU machines.
 */
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

struct memory {
    unsigned long long total, free, used;
};
struct utilization {
    unsigned gpu, memory;
};
struct process_v2 {
    unsigned pid;
    unsigned long long used_gpu_memory;
    unsigned gpu_instance_id, compute_instance_id;
};

static int devices[2];

static unsigned from_env(const char* name, unsigned fallback) {
    const char* value = getenv(name);
    return value != NULL ? (unsigned)strtoul(value, NULL, 10) : fallback;
}

EXPORT int nvmlInit_v2(void) { return 0; }
EXPORT int nvmlShutdown(void) { return 0; }
EXPORT const char* nvmlErrorString(int result) { return result == 3 ? "Not Supported" : "Unknown Error"; }
EXPORT int nvmlDeviceGetCount_v2(unsigned* count) {
    *count = 2;
    return 0;
}
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
    if (index > 1) return 2;
    *device = &devices[index];
    return 0;
}
EXPORT int nvmlDeviceGetName(void* device, char* name, unsigned length) {
    (void)device;
    strncpy(name, "Fake H100", length);
    return 0;
}
EXPORT int nvmlDeviceGetUUID(void* device, char* uuid, unsigned length) {
    /* FAKE_NVML_UUID names the first GPU (the app's tests give it the demo's key) */
    const char* first = getenv("FAKE_NVML_UUID") != NULL ? getenv("FAKE_NVML_UUID") : "GPU-aaaaaaaa-1111-2222-3333-444444444444";
    strncpy(uuid, device == &devices[0] ? first : "GPU-bbbbbbbb-1111-2222-3333-444444444444", length);
    return 0;
}
EXPORT int nvmlDeviceGetMemoryInfo(void* device, struct memory* m) {
    (void)device;
    m->total = 80ull << 30;
    m->used = (unsigned long long)from_env("FAKE_NVML_USED_MIB", 1024) << 20;
    m->free = m->total - m->used;
    return 0;
}
EXPORT int nvmlDeviceGetUtilizationRates(void* device, struct utilization* u) {
    u->gpu = device == &devices[0] ? from_env("FAKE_NVML_UTIL", 87) : 5;
    u->memory = 40;
    return 0;
}
EXPORT int nvmlDeviceGetPowerUsage(void* device, unsigned* milliwatts) {
    (void)device;
    const char* power = getenv("FAKE_NVML_POWER");
    if (power != NULL && strcmp(power, "refuse") == 0) return 3;
    *milliwatts = from_env("FAKE_NVML_POWER", 412345);
    return 0;
}
EXPORT int nvmlDeviceGetEnforcedPowerLimit(void* device, unsigned* milliwatts) {
    (void)device;
    *milliwatts = 700000;
    return 0;
}
EXPORT int nvmlDeviceGetClockInfo(void* device, int type, unsigned* mhz) {
    (void)device;
    *mhz = type == 1 ? from_env("FAKE_NVML_SM_MHZ", 1755) : 2619;
    return 0;
}
EXPORT int nvmlDeviceGetMaxClockInfo(void* device, int type, unsigned* mhz) {
    (void)device;
    *mhz = type == 1 ? 1980 : 2619;
    return 0;
}
EXPORT int nvmlDeviceGetTemperature(void* device, int sensor, unsigned* celsius) {
    (void)device;
    if (sensor != 0) return 3;
    *celsius = 61;
    return 0;
}
EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned* count, struct process_v2* infos) {
    if (device != &devices[0]) {
        *count = 0;
        return 0;
    }
    if (infos == NULL || *count < 2) {
        *count = 2;
        return 7; /* insufficient size */
    }
    *count = 2;
    memset(infos, 0, 2 * sizeof *infos);
    infos[0].pid = 4242;
    infos[0].used_gpu_memory = 3ull << 30;
    infos[1].pid = 4343;
    infos[1].used_gpu_memory = ~0ull; /* NVML_VALUE_NOT_AVAILABLE */
    return 0;
}

struct process_sample {
    unsigned pid;
    unsigned long long time_stamp;
    unsigned sm_util, mem_util, enc_util, dec_util;
};

/* Per-process samples as NVML gives them: only those newer than last_seen, newest not necessarily last.
 * FAKE_NVML_PROC_UTIL=refuse answers "Not Supported", =idle answers "Not Found" (no process ran work);
 * otherwise pid 4242 has an older sample of 10% and a newer one of FAKE_NVML_PROC_UTIL (default 63), and
 * pid 4343 one sample 5 s old, which a reader asking for the last 3 s must not get. */
#include <time.h>
EXPORT int nvmlDeviceGetProcessUtilization(void* device, struct process_sample* samples, unsigned* count,
                                           unsigned long long last_seen) {
    const char* mode = getenv("FAKE_NVML_PROC_UTIL");
    if (mode != NULL && strcmp(mode, "refuse") == 0) return 3;
    if (device != &devices[0] || (mode != NULL && strcmp(mode, "idle") == 0)) return 6;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    const unsigned long long now_us = (unsigned long long)now.tv_sec * 1000000ull + (unsigned long long)now.tv_nsec / 1000ull;
    struct process_sample all[3] = {
        {4242, now_us - 200000ull, from_env("FAKE_NVML_PROC_UTIL", 63), 20, 0, 0},
        {4242, now_us - 900000ull, 10, 5, 0, 0},
        {4343, now_us - 5000000ull, 7, 1, 0, 0},
    };
    unsigned n = 0;
    for (int i = 0; i < 3; ++i)
        if (all[i].time_stamp > last_seen) ++n;
    if (n == 0) return 6;
    if (samples == NULL || *count < n) {
        *count = n;
        return 7;
    }
    *count = 0;
    for (int i = 0; i < 3; ++i)
        if (all[i].time_stamp > last_seen) samples[(*count)++] = all[i];
    return 0;
}
