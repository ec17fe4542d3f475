#pragma once
// What `gpupart run` tells the shim so it may confine eager launches through the driver's per-stream TPC
// mask instead of the launch callback (docs/launch-path.md): the GPU, where the probe verified the field on
// which driver and descriptor version, and the GPU's TPC numbering (the field holds TPC numbers, the
// process's masks are descriptor bits). The value of GPUPART_STREAM_MASK (registry_layout.h).
#include <optional>
#include <string>

#include "model/gpu.hpp"

namespace gpupart {

struct StreamMaskEnv {
    std::optional<std::string> value;  // set it; nullopt: leave the process on the launch callback
    std::string why;                   // one line: why not, or what was verified
};

StreamMaskEnv stream_mask_env(const Gpu& gpu);

}  // namespace gpupart
