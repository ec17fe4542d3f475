#pragma once
// Engines by runlist (with the channel groups on each) and the copy-engine wiring (LCE -> PCE, GRCEs,
// PCEs two LCEs share), as text. Pure functions of the model: `gpupart topology`, `engines` and
// `copy-engines` print them.
#include <string>

#include "model/gpu.hpp"

namespace gpupart {

std::string engines_text(const Gpu& gpu);
std::string copy_engines_text(const Gpu& gpu);

}  // namespace gpupart
