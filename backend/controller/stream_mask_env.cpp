#include "controller/stream_mask_env.hpp"

#include <fmt/format.h>

#include "model/tpc_numbering.hpp"

namespace gpupart {

StreamMaskEnv stream_mask_env(const Gpu& gpu) {
    if (!gpu.stream_mask_offset.known())
        return {std::nullopt, "no probe of this GPU and driver verified the driver's stream mask (run `gpupart probe`)"};
    if (!gpu.uuid.known() || !gpu.driver_version.known() || !gpu.descriptor_version.known())
        return {std::nullopt, "the GPU's UUID, driver version or descriptor version is not known"};
    std::string why;
    const std::optional<TpcNumbering> numbering = TpcNumbering::try_of(gpu, &why);
    if (!numbering) return {std::nullopt, "the GPU's TPC numbering is not known: " + why};
    if (numbering->tpc_count() < 1 || numbering->tpc_count() > 128)
        return {std::nullopt, fmt::format("{} TPCs: a stream mask holds 1 to 128", numbering->tpc_count())};
    std::string map;
    for (int k = 0; k < 128; ++k) {
        const std::optional<int> bit = k < numbering->tpc_count() ? numbering->bit_of(k) : std::nullopt;
        if (k < numbering->tpc_count() && !bit) return {std::nullopt, fmt::format("TPC {} has no descriptor bit", k)};
        map += fmt::format("{:02x}", bit ? *bit : 0xff);
    }
    const std::string& driver = *gpu.driver_version.value;
    if (driver.empty() || driver.find_first_of(",= \n") != std::string::npos)
        return {std::nullopt, "the driver version cannot be passed on"};
    return {fmt::format("{}={:#x},{},{:#x},{}", *gpu.uuid.value, *gpu.stream_mask_offset.value, driver, *gpu.descriptor_version.value, map),
            fmt::format("the driver's stream mask, verified at {:#x} on driver {}", *gpu.stream_mask_offset.value, driver)};
}

}  // namespace gpupart
