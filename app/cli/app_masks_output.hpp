#pragma once
// How `gpupart list` shows the masks a program chose itself (libgpupart.so; registry/app_masks.hpp): the
// JSON of the process's choices and of what they run on per GPU (docs/json-output.md), and the lines the
// text table prints under itself. Allowed TPC sets, as every gpupart mask; JSON adds the raw disable masks
// the slot stores, named `disable_mask`.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "registry/slot_file.hpp"

namespace gpupart::cli {

// "app_masks" of a process: null when the program never called the API.
nlohmann::ordered_json app_masks_json(const SlotAppMasks& app);
// "app_effective" of one of its GPUs: what each choice runs on under the operator's mask there (null when
// the program never called the API, or its masks were being written).
nlohmann::ordered_json app_effective_json(const SlotRecord& record, const std::string& gpu);
// The lines under the table for one process (none when it does not use the API), escaped; with `only_gpu`,
// what its choices run on there only.
std::vector<std::string> app_masks_lines(const SlotRecord& record, const std::optional<std::string>& only_gpu = std::nullopt);

}  // namespace gpupart::cli
