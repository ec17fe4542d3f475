#pragma once
// What NVML adds to a live model: the GPU's name and UUID, and each process's GPU memory (processes the
// driver's RM controls did not list are added from NVML). Facts another source already gave are kept;
// where NVML gives them too and disagrees, a note says so.
#include <optional>
#include <string>

#include "model/gpu.hpp"
#include "sources/nvml_source.hpp"

namespace gpupart {

// The NVML device at `bus_id` ("0000:04:00.0" as sysfs writes it; NVML writes an 8-digit domain).
const NvmlDevice* nvml_device_at(const NvmlFacts& nvml, const std::string& bus_id);

void add_nvml_facts(const NvmlDevice& device, Gpu& gpu);

}  // namespace gpupart
