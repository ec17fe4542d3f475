#pragma once
// The few CUDA driver API calls gpupart-probe makes, from libcuda.so.1 loaded with dlopen, so the probe
// builds without the CUDA toolkit and runs (saying "no libcuda") on machines without a driver. Our own
// declarations of the handful of types: opaque handles and int results, as in the driver API.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpupart::probe {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;

constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaNotReady = 600;  // CUDA_ERROR_NOT_READY: the stream still has work

// cuDeviceGetAttribute / cuFuncSetAttribute numbers used here (cuda.h, CUdevice_attribute / CUfunction_attribute).
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerMultiprocessor = 81;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;

// libcuda.so.1 could not be loaded: the probe says so in one line and exits 2.
class NoLibcuda : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A CUDA call failed: "where: CUDA error N (text)".
class CudaError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct CudaDriver {
    CUresult (*init)(unsigned flags) = nullptr;
    CUresult (*driver_get_version)(int* version) = nullptr;
    CUresult (*device_get_count)(int* count) = nullptr;
    CUresult (*device_get)(CUdevice* device, int ordinal) = nullptr;
    CUresult (*device_get_name)(char* name, int length, CUdevice device) = nullptr;
    CUresult (*device_get_uuid)(unsigned char uuid[16], CUdevice device) = nullptr;
    CUresult (*device_get_pci_bus_id)(char* bus_id, int length, CUdevice device) = nullptr;
    CUresult (*device_get_attribute)(int* value, int attribute, CUdevice device) = nullptr;
    CUresult (*primary_ctx_retain)(CUcontext* context, CUdevice device) = nullptr;
    CUresult (*primary_ctx_release)(CUdevice device) = nullptr;
    CUresult (*ctx_set_current)(CUcontext context) = nullptr;
    CUresult (*module_load_data)(CUmodule* module, const void* image) = nullptr;
    CUresult (*module_get_function)(CUfunction* function, CUmodule module, const char* name) = nullptr;
    CUresult (*func_set_attribute)(CUfunction function, int attribute, int value) = nullptr;
    CUresult (*mem_alloc)(CUdeviceptr* pointer, std::size_t bytes) = nullptr;
    CUresult (*mem_free)(CUdeviceptr pointer) = nullptr;
    CUresult (*memset_d32)(CUdeviceptr pointer, unsigned value, std::size_t count) = nullptr;
    CUresult (*memcpy_dtoh)(void* destination, CUdeviceptr source, std::size_t bytes) = nullptr;
    CUresult (*launch_kernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                              unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream, void** params,
                              void** extra) = nullptr;
    CUresult (*stream_query)(CUstream stream) = nullptr;
    CUresult (*stream_create)(CUstream* stream, unsigned flags) = nullptr;
    CUresult (*stream_destroy)(CUstream stream) = nullptr;
    CUresult (*get_error_string)(CUresult error, const char** text) = nullptr;

    // dlopen("libcuda.so.1") and every symbol (versioned names first, e.g. cuMemAlloc_v2, then the plain
    // name). Throws NoLibcuda when the library is missing, CudaError when a symbol is.
    static CudaDriver load();

    // Throws CudaError "where: CUDA error N (text)" unless result is success.
    void check(CUresult result, const char* where) const;
};

}  // namespace gpupart::probe
