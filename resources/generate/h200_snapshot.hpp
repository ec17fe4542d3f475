#pragma once
#include <string>

#include "model/gpu.hpp"

namespace gpupart::recorded {

// The built-in H200 snapshot, made from the raw logs under `fixtures` (tests/fixtures). Throws
// std::runtime_error when the logs do not have the structure the snapshot relies on.
Snapshot make_h200_snapshot(const std::string& fixtures);

// Engine/runlist examples from Bakita & Anderson, RTAS 2024, Tables II and IV.
Snapshot make_gtx1060_snapshot();
Snapshot make_rtx6000ada_snapshot();

}  // namespace gpupart::recorded
