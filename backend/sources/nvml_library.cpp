#include "sources/nvml_library.hpp"

#include <initializer_list>

#include <dlfcn.h>
#include <fmt/format.h>

#include "platform/dl_symbols.hpp"

namespace gpupart::nvml {
namespace {

template <typename Function>
void require(void* library, const std::string& file, Function& out, std::initializer_list<const char*> names) {
    if (!resolve_symbol(library, out, names))
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
    resolve_symbol(library, l.driver_version, {"nvmlSystemGetDriverVersion"});
    resolve_symbol(library, l.pci_info, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"});
    resolve_symbol(library, l.attributes, {"nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes"});
    resolve_symbol(library, l.memory_info, {"nvmlDeviceGetMemoryInfo"});
    resolve_symbol(library, l.utilization, {"nvmlDeviceGetUtilizationRates"});
    resolve_symbol(library, l.clock, {"nvmlDeviceGetClockInfo"});
    resolve_symbol(library, l.max_clock, {"nvmlDeviceGetMaxClockInfo"});
    resolve_symbol(library, l.mig_mode, {"nvmlDeviceGetMigMode"});
    resolve_symbol(library, l.power_usage, {"nvmlDeviceGetPowerUsage"});
    resolve_symbol(library, l.power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
    resolve_symbol(library, l.temperature, {"nvmlDeviceGetTemperature"});
    int version = 0;
    if (resolve_symbol(library, l.compute_processes,
                {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
                 "nvmlDeviceGetComputeRunningProcesses"},
                &version))
        l.processes_v2_layout = version < 2;  // _v3 and _v2 fill nvmlProcessInfo_v2_t; the plain name fills v1
    resolve_symbol(library, l.process_name, {"nvmlSystemGetProcessName"});
    resolve_symbol(library, l.process_utilization, {"nvmlDeviceGetProcessUtilization"});
    return l;
}

}  // namespace gpupart::nvml
