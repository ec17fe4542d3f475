#pragma once
// What `gpupart mask parse` prints: the normalised mask in list and hex form, its SMs, the GPCs it
// covers whole, and notes (dropped holes, count placement). Text for people, JSON for scripts.
#include <string>

#include <nlohmann/json.hpp>

#include "model/gpu.hpp"
#include "model/mask_resolve.hpp"

namespace gpupart {

std::string mask_report_text(const std::string& expression, const ResolvedMask& resolved, const Gpu& gpu);
nlohmann::ordered_json mask_report_json(const std::string& expression, const ResolvedMask& resolved, const Gpu& gpu);

}  // namespace gpupart
