#pragma once
// Which snapshot a front end shows when the user names none: this machine's GPUs read live where an
// NVIDIA GPU exists, else the built-in recorded H200, always saying which and why.
#include <optional>
#include <string>
#include <vector>

#include "model/gpu.hpp"
#include "sources/live_topology.hpp"

namespace gpupart {

struct ChosenSnapshot {
    Snapshot snapshot;
    std::string origin;  // "live", "builtin:h200" or a file path
    bool builtin = false;
    bool live = false;
    std::string why;     // one line for the user: why this snapshot is shown
    std::vector<std::vector<SourceStatus>> sources;  // live only: sources[i], what each source said about GPU i
};

// `requested` is what --snapshot said (a path or builtin:NAME), if anything. Throws UserError.
ChosenSnapshot choose_snapshot(const std::optional<std::string>& requested, const MachineRoots& roots = {});

// The GPU `index` of a chosen snapshot; throws UserError naming the valid range.
const Gpu& select_gpu(const ChosenSnapshot& chosen, int index);

}  // namespace gpupart
