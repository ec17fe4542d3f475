#pragma once
// libnvidia-ml loaded with dlopen (no NVML headers, no link-time dependency), with versioned-symbol
// fallback as nvtop does it: each entry names its newest symbol first (nvmlDeviceGetCount_v2) and the
// older ones after (nvmlDeviceGetCount). Our own declarations of the few NVML structures read, from
// NVIDIA's published nvml.h.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpupart::nvml {

using Return = int;  // nvmlReturn_t
using Device = void*;  // nvmlDevice_t

constexpr Return kSuccess = 0;
constexpr Return kNotSupported = 3;
constexpr Return kNoPermission = 4;
constexpr Return kNotFound = 6;  // nvmlDeviceGetProcessUtilization: no sample newer than asked
constexpr Return kInsufficientSize = 7;
constexpr Return kDriverNotLoaded = 9;
constexpr Return kLibRmVersionMismatch = 18;

constexpr int kClockGraphics = 0;  // nvmlClockType_t
constexpr int kClockSm = 1;
constexpr int kClockMemory = 2;
constexpr int kTemperatureGpu = 0;  // nvmlTemperatureSensors_t

struct PciInfo {  // nvmlPciInfo_t (v3 fills busId)
    char bus_id_legacy[16];
    unsigned domain;
    unsigned bus;
    unsigned device;
    unsigned pci_device_id;
    unsigned pci_subsystem_id;
    char bus_id[32];
};

struct Memory {  // nvmlMemory_t (v1)
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct Utilization {  // nvmlUtilization_t
    unsigned gpu;
    unsigned memory;
};

struct ProcessInfoV1 {  // nvmlProcessInfo_v1_t: nvmlDeviceGetComputeRunningProcesses
    unsigned pid;
    unsigned long long used_gpu_memory;
};

struct ProcessInfoV2 {  // nvmlProcessInfo_v2_t / nvmlProcessInfo_t: the _v2 and _v3 entry points
    unsigned pid;
    unsigned long long used_gpu_memory;
    unsigned gpu_instance_id;
    unsigned compute_instance_id;
};

struct ProcessUtilizationSample {  // nvmlProcessUtilizationSample_t: nvmlDeviceGetProcessUtilization
    unsigned pid;
    unsigned long long time_stamp;  // microseconds, CPU clock
    unsigned sm_util;               // percent of the sample period a kernel of this process ran
    unsigned mem_util;              // ... its memory reads or writes ran
    unsigned enc_util;
    unsigned dec_util;
};

struct DeviceAttributes {  // nvmlDeviceAttributes_t
    unsigned multiprocessor_count;
    unsigned shared_copy_engine_count;
    unsigned shared_decoder_count;
    unsigned shared_encoder_count;
    unsigned shared_jpeg_count;
    unsigned shared_ofa_count;
    unsigned gpu_instance_slice_count;
    unsigned compute_instance_slice_count;
    unsigned long long memory_size_mb;
};

static_assert(sizeof(PciInfo) == 68 && sizeof(ProcessInfoV1) == 16 && sizeof(ProcessInfoV2) == 24 &&
              sizeof(DeviceAttributes) == 40 && sizeof(ProcessUtilizationSample) == 32);

struct Library {
    // Required: without these there is nothing to read.
    Return (*init)() = nullptr;
    Return (*shutdown)() = nullptr;
    const char* (*error_string)(Return) = nullptr;
    Return (*device_count)(unsigned*) = nullptr;
    Return (*handle_by_index)(unsigned, Device*) = nullptr;
    Return (*device_name)(Device, char*, unsigned) = nullptr;
    Return (*device_uuid)(Device, char*, unsigned) = nullptr;
    // Optional: a missing one makes its fact unknown, with the symbol named as the reason.
    Return (*driver_version)(char*, unsigned) = nullptr;
    Return (*pci_info)(Device, PciInfo*) = nullptr;
    Return (*attributes)(Device, DeviceAttributes*) = nullptr;
    Return (*memory_info)(Device, Memory*) = nullptr;
    Return (*utilization)(Device, Utilization*) = nullptr;
    Return (*clock)(Device, int, unsigned*) = nullptr;
    Return (*max_clock)(Device, int, unsigned*) = nullptr;
    Return (*mig_mode)(Device, unsigned*, unsigned*) = nullptr;
    Return (*power_usage)(Device, unsigned*) = nullptr;            // milliwatts
    Return (*power_limit)(Device, unsigned*) = nullptr;            // enforced limit, milliwatts
    Return (*temperature)(Device, int, unsigned*) = nullptr;       // sensor 0: the GPU die, degrees C
    Return (*compute_processes)(Device, unsigned*, void*) = nullptr;
    bool processes_v2_layout = false;  // which nvmlProcessInfo layout compute_processes fills
    Return (*process_name)(unsigned, char*, unsigned) = nullptr;
    Return (*process_utilization)(Device, ProcessUtilizationSample*, unsigned*, unsigned long long) = nullptr;

    std::string path;  // what was loaded

    // "NVML error N (text)"
    std::string describe(Return result) const;
};

struct NvmlAbsent : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct NvmlUnusable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Loads `file` (normally "libnvidia-ml.so.1"; a path or a name for the loader to find). Throws
// NvmlAbsent when the library cannot be loaded, NvmlUnusable when a required symbol is missing (the
// message names it). The library stays loaded for the life of the process, as NVML expects.
Library load_library(const std::string& file);

}  // namespace gpupart::nvml
