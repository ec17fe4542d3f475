#pragma once
// Which PCI devices are NVIDIA GPUs, as a pure function of what sysfs or a udev event says about them:
// vendor 0x10de and PCI base class 0x03 (display controller: VGA 0x0300, 3D 0x0302, other 0x0380). An
// NVIDIA GPU's audio or USB functions share its vendor id but not its class.
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gpupart {

// sysfs attributes: vendor "0x10de", class "0x030200".
bool is_nvidia_gpu(std::string_view vendor, std::string_view pci_class);

// A udev event's properties: PCI_ID "10DE:2335", PCI_CLASS "30200" (hex, no leading zero), PCI_SLOT_NAME.
// Removal events carry these too (sysfs is gone by then). nullopt when not an NVIDIA GPU.
struct UeventGpu {
    std::string bus_id;     // PCI_SLOT_NAME
    std::string device_id;  // "0x2335"
    std::string pci_class;  // "0x030200"
};
std::optional<UeventGpu> nvidia_gpu_from_uevent(const std::map<std::string, std::string>& properties);

}  // namespace gpupart
