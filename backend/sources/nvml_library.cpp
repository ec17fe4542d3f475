#include "sources/nvml_library.hpp"

#include <cstring>
#include <initializer_list>

#include <dlfcn.h>
#include <fmt/format.h>

namespace gpupart::nvml {
namespace {

// The first of `names` the library has, or nullptr; the chosen name's position in `index` when given.
template <typename Function>
bool resolve(void* library, Function& out, std::initializer_list<const char*> names, int* index = nullptr) {
    int position = 0;
    for (const char* name : names) {
        if (void* symbol = ::dlsym(library, name); symbol != nullptr) {
            static_assert(sizeof(out) == sizeof(symbol));
            std::memcpy(&out, &symbol, sizeof out);  // POSIX hands functions out as object pointers
            if (index != nullptr) *index = position;
            return true;
        }
        ++position;
    }
    return false;
}

template <typename Function>
void require(void* library, const std::string& file, Function& out, std::initializer_list<const char*> names) {
    if (!resolve(library, out, names))
        throw NvmlUnusable(fmt::format("{} has no {}: not NVIDIA's NVML, or too old", file, *names.begin()));
}

}  // namespace

std::string Library::describe(Return result) const {
    const char* text = error_string != nullptr ? error_string(result) : nullptr;
    return fmt::format("NVML error {} ({})", result, text != nullptr ? text : "unknown");
}

Library load_library(const std::string& file) {
    void* library = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) throw NvmlAbsent(fmt::format("no NVML: {}", ::dlerror()));
    Library l;
    l.path = file;
    require(library, file, l.init, {"nvmlInit_v2", "nvmlInit"});
    require(library, file, l.shutdown, {"nvmlShutdown"});
    require(library, file, l.error_string, {"nvmlErrorString"});
    require(library, file, l.device_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
    require(library, file, l.handle_by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
    require(library, file, l.device_name, {"nvmlDeviceGetName"});
    require(library, file, l.device_uuid, {"nvmlDeviceGetUUID"});
    resolve(library, l.driver_version, {"nvmlSystemGetDriverVersion"});
    resolve(library, l.pci_info, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"});
    resolve(library, l.attributes, {"nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes"});
    resolve(library, l.memory_info, {"nvmlDeviceGetMemoryInfo"});
    resolve(library, l.utilization, {"nvmlDeviceGetUtilizationRates"});
    resolve(library, l.clock, {"nvmlDeviceGetClockInfo"});
    resolve(library, l.max_clock, {"nvmlDeviceGetMaxClockInfo"});
    resolve(library, l.mig_mode, {"nvmlDeviceGetMigMode"});
    int version = 0;
    if (resolve(library, l.compute_processes,
                {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
                 "nvmlDeviceGetComputeRunningProcesses"},
                &version))
        l.processes_v2_layout = version < 2;  // _v3 and _v2 fill nvmlProcessInfo_v2_t; the plain name fills v1
    resolve(library, l.process_name, {"nvmlSystemGetProcessName"});
    return l;
}

}  // namespace gpupart::nvml
