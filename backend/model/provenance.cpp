#include "model/provenance.hpp"

#include <array>
#include <utility>

namespace gpupart {
namespace {
constexpr std::array<std::pair<Source, std::string_view>, 10> kNames{{
    {Source::recorded, "recorded"},
    {Source::literature, "literature"},
    {Source::probe, "probe"},
    {Source::rmctrl, "rmctrl"},
    {Source::nvdebug, "nvdebug"},
    {Source::mmio, "mmio"},
    {Source::nvml, "nvml"},
    {Source::udev, "udev"},
    {Source::registry, "registry"},
    {Source::inferred, "inferred"},
}};
}  // namespace

std::string_view to_string(Source source) {
    for (const auto& [value, name] : kNames)
        if (value == source) return name;
    return "unknown";
}

std::optional<Source> source_from_string(std::string_view text) {
    for (const auto& [value, name] : kNames)
        if (name == text) return value;
    return std::nullopt;
}

}  // namespace gpupart
