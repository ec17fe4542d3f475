#include "model/ascii_text.hpp"
#include "platform/udev_filter.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace gpupart {
namespace {

bool hex_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

}  // namespace

bool is_nvidia_gpu(std::string_view vendor, std::string_view pci_class) {
    const std::string c = ascii_lower(pci_class);
    return ascii_lower(vendor) == "0x10de" && c.size() == 8 && c.starts_with("0x03") && hex_digits(c.substr(2));
}

std::optional<UeventGpu> nvidia_gpu_from_uevent(const std::map<std::string, std::string>& properties) {
    const auto id = properties.find("PCI_ID");
    const auto pci_class = properties.find("PCI_CLASS");
    const auto slot = properties.find("PCI_SLOT_NAME");
    if (id == properties.end() || pci_class == properties.end() || slot == properties.end()) return std::nullopt;
    const std::string pci_id = ascii_lower(id->second);
    const auto colon = pci_id.find(':');
    if (colon != 4 || pci_id.size() != 9 || !hex_digits(pci_id.substr(0, 4)) || !hex_digits(pci_id.substr(5))) return std::nullopt;
    const std::string class_digits = ascii_lower(pci_class->second);
    if (!hex_digits(class_digits) || class_digits.size() > 6) return std::nullopt;
    const std::string sysfs_class = fmt::format("0x{:0>6}", class_digits);
    if (!is_nvidia_gpu("0x" + pci_id.substr(0, 4), sysfs_class)) return std::nullopt;
    return UeventGpu{slot->second, "0x" + pci_id.substr(5), sysfs_class};
}

}  // namespace gpupart
