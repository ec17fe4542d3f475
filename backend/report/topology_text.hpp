#pragma once
// The terminal floorplan of one GPU: every GPC as a row of TPC slots (mask bit over SM ids, holes
// visibly empty), then engines, runlists and copy-engine wiring, each with where it came from.
// A pure function of the model, shared by `gpupart topology` and (later) `gpupart top`.
#include <cstdint>
#include <string>
#include <vector>

#include "model/gpu.hpp"

namespace gpupart {

std::string topology_text(const Gpu& gpu);
std::string pce_list(std::uint32_t pce_mask);  // "0-11", "12,14", "none"

// "66 TPCs, 132 SMs, 8 GPCs, 62 holes": the counts as one line, also used by other reports.
std::string topology_summary(const Gpu& gpu);

// Pairs of LCEs that share a physical copy engine (Bakita & Anderson, RTAS 2024, rule R8).
struct SharedCopyEngines {
    int lce_a = 0;
    int lce_b = 0;
    std::uint32_t pces = 0;
    std::string pce_list() const;  // "12,14"
};
std::vector<SharedCopyEngines> shared_copy_engines(const Gpu& gpu);
// The same as lines: "LCE0 and LCE2 share PCEs 12,14: their copies interfere (Bakita & Anderson, RTAS 2024, rule R8)".
std::vector<std::string> shared_copy_engine_lines(const Gpu& gpu);

}  // namespace gpupart
