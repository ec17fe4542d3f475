#pragma once
// Is there an NVIDIA GPU on this machine at all? Read from sysfs (vendor 0x10de, display class: the
// filter of platform/udev_filter.hpp), so it needs no driver library; the front ends use it to decide
// between live sources and the built-in recorded snapshot, and to say which one they show.
#include <string>
#include <vector>

namespace gpupart {

struct PciGpu {
    std::string bus_id;     // "0000:00:06.0"
    std::string device_id;  // "0x2335"
    std::string pci_class;  // "0x030200" (3D controller) or "0x030000" (VGA)
};

// `sysfs_root` is "/sys" on a real machine; tests point it at a constructed tree.
std::vector<PciGpu> find_nvidia_gpus(const std::string& sysfs_root = "/sys");

}  // namespace gpupart
