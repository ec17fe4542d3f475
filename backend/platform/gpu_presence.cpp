#include "platform/gpu_presence.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

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
        if (first_line(entry.path() / "vendor") != "0x10de") continue;
        const std::string pci_class = first_line(entry.path() / "class");
        // 0x0300xx VGA, 0x0302xx 3D controller: the classes NVIDIA GPUs use (not audio or USB functions).
        if (!pci_class.starts_with("0x0300") && !pci_class.starts_with("0x0302")) continue;
        gpus.push_back(PciGpu{entry.path().filename().string(), first_line(entry.path() / "device"), pci_class});
    }
    std::sort(gpus.begin(), gpus.end(), [](const PciGpu& a, const PciGpu& b) { return a.bus_id < b.bus_id; });
    return gpus;
}

}  // namespace gpupart
