#include "cuda_driver.hpp"

#include <initializer_list>

#include <dlfcn.h>
#include <fmt/format.h>

#include "platform/dl_symbols.hpp"

namespace gpupart::probe {
namespace {

template <typename Function>
void resolve(void* library, Function& out, std::initializer_list<const char*> names) {
    if (!resolve_symbol(library, out, names))
        throw CudaError(fmt::format("libcuda.so.1 has no {}: this driver is too old or not NVIDIA's", *names.begin()));
}

}  // namespace

CudaDriver CudaDriver::load() {
    void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) throw NoLibcuda(fmt::format("no libcuda: {}", ::dlerror()));
    CudaDriver d;
    resolve(library, d.init, {"cuInit"});
    resolve(library, d.driver_get_version, {"cuDriverGetVersion"});
    resolve(library, d.device_get_count, {"cuDeviceGetCount"});
    resolve(library, d.device_get, {"cuDeviceGet"});
    resolve(library, d.device_get_name, {"cuDeviceGetName"});
    resolve(library, d.device_get_uuid, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"});
    resolve(library, d.device_get_pci_bus_id, {"cuDeviceGetPCIBusId"});
    resolve(library, d.device_get_attribute, {"cuDeviceGetAttribute"});
    resolve(library, d.primary_ctx_retain, {"cuDevicePrimaryCtxRetain"});
    resolve(library, d.primary_ctx_release, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"});
    resolve(library, d.ctx_set_current, {"cuCtxSetCurrent"});
    resolve(library, d.module_load_data, {"cuModuleLoadData"});
    resolve(library, d.module_get_function, {"cuModuleGetFunction"});
    resolve(library, d.func_set_attribute, {"cuFuncSetAttribute"});
    resolve(library, d.mem_alloc, {"cuMemAlloc_v2"});
    resolve(library, d.mem_free, {"cuMemFree_v2"});
    resolve(library, d.memset_d32, {"cuMemsetD32_v2"});
    resolve(library, d.memcpy_dtoh, {"cuMemcpyDtoH_v2"});
    resolve(library, d.launch_kernel, {"cuLaunchKernel"});
    resolve(library, d.stream_query, {"cuStreamQuery"});
    resolve(library, d.stream_create, {"cuStreamCreate"});
    resolve(library, d.stream_destroy, {"cuStreamDestroy_v2", "cuStreamDestroy"});
    resolve(library, d.get_error_string, {"cuGetErrorString"});
    return d;  // the library stays loaded for the life of the process
}

void CudaDriver::check(CUresult result, const char* where) const {
    if (result == kCudaSuccess) return;
    const char* text = nullptr;
    if (get_error_string == nullptr || get_error_string(result, &text) != kCudaSuccess || text == nullptr) text = "unknown";
    throw CudaError(fmt::format("{}: CUDA error {} ({})", where, result, text));
}

}  // namespace gpupart::probe
