#include "platform/gpu_presence.hpp"

#include <algorithm>
#include <filesystem>

#include "platform/proc_file.hpp"
#include "platform/udev_filter.hpp"

namespace gpupart {
std::vector<PciGpu> find_nvidia_gpus(const std::string& sysfs_root) {
    std::vector<PciGpu> gpus;
    const std::filesystem::path devices = std::filesystem::path(sysfs_root) / "bus/pci/devices";
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(devices, error)) {
        const std::string pci_class = read_first_line((entry.path() / "class").string());
        if (!is_nvidia_gpu(read_first_line((entry.path() / "vendor").string()), pci_class)) continue;  // not its audio or USB functions
        gpus.push_back(PciGpu{entry.path().filename().string(), read_first_line((entry.path() / "device").string()), pci_class});
    }
    std::sort(gpus.begin(), gpus.end(), [](const PciGpu& a, const PciGpu& b) { return a.bus_id < b.bus_id; });
    return gpus;
}

}  // namespace gpupart
