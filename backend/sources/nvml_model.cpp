#include "sources/nvml_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sources/mmio_image.hpp"  // sysfs_bus_id: NVML writes an 8-digit PCI domain

namespace gpupart {
namespace {

// Takes NVML's value where no other source had one; notes a disagreement where both had one.
template <typename T>
void merge(const char* what, const Fact<T>& from_nvml, Fact<T>& fact, Gpu& gpu) {
    if (!from_nvml.known()) return;
    if (!fact.known()) {
        fact = from_nvml;
        return;
    }
    if (*fact.value != *from_nvml.value)
        gpu.notes.push_back(fmt::format("{}: {} says {}, NVML says {}", what, to_string(fact.from.source), *fact.value, *from_nvml.value));
}

}  // namespace

const NvmlDevice* nvml_device_at(const NvmlFacts& nvml, const std::string& bus_id) {
    for (const NvmlDevice& device : nvml.devices)
        if (device.pci_bus_id.known() && sysfs_bus_id(*device.pci_bus_id.value) == bus_id) return &device;
    return nullptr;
}

void add_nvml_facts(const NvmlDevice& device, Gpu& gpu) {
    merge("name", device.name, gpu.name, gpu);
    merge("uuid", device.uuid, gpu.uuid, gpu);
    merge("SM count", device.sm_count, gpu.sm_count, gpu);
    merge("MIG mode", device.mig_enabled, gpu.mig_enabled, gpu);
    for (const NvmlProcess& seen : device.processes) {
        auto it = std::find_if(gpu.processes.begin(), gpu.processes.end(), [&](const Process& p) { return p.pid == seen.pid; });
        if (it == gpu.processes.end()) {
            Process process;
            process.pid = seen.pid;
            process.command = seen.name;
            process.from = Provenance{Source::nvml, "nvmlDeviceGetComputeRunningProcesses"};
            gpu.processes.push_back(std::move(process));
            it = std::prev(gpu.processes.end());
        }
        it->gpu_memory_bytes = seen.used_memory_bytes;
        if (seen.mps_server) it->command += fmt::format(" (MPS server of {} client{})", seen.mps_clients.size(), seen.mps_clients.size() == 1 ? "" : "s");
    }
    if (!device.processes_unknown.empty()) gpu.notes.push_back("NVML's process list: " + device.processes_unknown);
    std::sort(gpu.processes.begin(), gpu.processes.end(), [](const Process& a, const Process& b) { return a.pid < b.pid; });
}

}  // namespace gpupart
