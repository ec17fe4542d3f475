#include "platform/gpu_presence.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "sources/udev_filter.hpp"

namespace gpupart {
namespace {

std::string first_line(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

}  // namespace

std::vector<PciGpu> find_nvidia_gpus(const std::string& sysfs_root) {
    std::vector<PciGpu> gpus;
    const std::filesystem::path devices = std::filesystem::path(sysfs_root) / "bus/pci/devices";
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(devices, error)) {
        const std::string pci_class = first_line(entry.path() / "class");
        if (!is_nvidia_gpu(first_line(entry.path() / "vendor"), pci_class)) continue;  // not its audio or USB functions
        gpus.push_back(PciGpu{entry.path().filename().string(), first_line(entry.path() / "device"), pci_class});
    }
    std::sort(gpus.begin(), gpus.end(), [](const PciGpu& a, const PciGpu& b) { return a.bus_id < b.bus_id; });
    return gpus;
}

}  // namespace gpupart
