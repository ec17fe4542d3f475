#include "model/cuda_visible_devices.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "model/ascii_text.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
}

bool one_model(const std::vector<Gpu>& gpus) {
    return std::all_of(gpus.begin(), gpus.end(), [&](const Gpu& gpu) { return gpu.name.value == gpus.front().name.value; });
}

}  // namespace

VisibleGpus resolve_cuda_visible_devices(const std::vector<Gpu>& gpus, std::optional<std::string_view> value,
                                         std::optional<std::string_view> device_order) {
    VisibleGpus visible;
    if (!value) {
        for (const Gpu& gpu : gpus) visible.indexes.push_back(gpu.index);
        return visible;
    }
    const bool bus_order = device_order && trimmed(*device_order) == "PCI_BUS_ID";
    std::string_view rest = *value;
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const std::string_view item = trimmed(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        std::optional<int> found;
        if (!item.empty() && item.find_first_not_of("0123456789") == std::string_view::npos) {
            if (!bus_order && !one_model(gpus)) {
                visible.problem = fmt::format("CUDA_VISIBLE_DEVICES={} names GPU {} by ordinal, and CUDA numbers this "
                                              "machine's GPUs of different models fastest first, which gpupart cannot "
                                              "tell: name it by UUID (`gpupart gpus`) or set CUDA_DEVICE_ORDER=PCI_BUS_ID",
                                              one_line(*value, 80), one_line(item, 8));
                return visible;
            }
            if (item.size() <= 4) {
                const int ordinal = std::stoi(std::string(item));
                if (ordinal < static_cast<int>(gpus.size())) found = gpus[static_cast<std::size_t>(ordinal)].index;
            }
        } else if (ascii_lower(item).starts_with("mig-")) {
            visible.problem = fmt::format("CUDA_VISIBLE_DEVICES={} names a MIG instance: gpupart partitions whole GPUs, "
                                          "not MIG instances", one_line(*value, 80));
            return visible;
        } else if (ascii_lower(item).starts_with("gpu-")) {
            std::vector<int> matches;
            for (const Gpu& gpu : gpus)
                if (ascii_lower(gpu.uuid.value.value_or("")).starts_with(ascii_lower(item))) matches.push_back(gpu.index);
            if (matches.size() == 1) found = matches.front();
        }
        // CUDA reads no further than an entry that names no device (or one named twice).
        if (!found || std::find(visible.indexes.begin(), visible.indexes.end(), *found) != visible.indexes.end()) break;
        visible.indexes.push_back(*found);
    }
    return visible;
}

}  // namespace gpupart
