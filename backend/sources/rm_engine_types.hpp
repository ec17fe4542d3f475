#pragma once
// The driver's NV2080_ENGINE_TYPE numbers (open-gpu-kernel-modules, class/cl2080_notification.h),
// as GPU_GET_ENGINES_V2 returns them, turned into gpupart engine names and kinds.
#include <cstdint>
#include <optional>
#include <string>

#include "model/gpu.hpp"

namespace gpupart {

struct RmEngineType {
    std::string name;  // "GR0", "COPY3", "NVDEC1", "NVJPEG5", "OFA0"
    EngineKind kind = EngineKind::other;
    int instance = 0;
};

// nullopt for numbers outside the table (the caller reports them as "engine type 0x..").
std::optional<RmEngineType> rm_engine_type(std::uint32_t type);

}  // namespace gpupart
