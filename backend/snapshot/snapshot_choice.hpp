#pragma once
// Which snapshot a front end shows when the user names none: this machine's GPUs read live where an
// NVIDIA GPU exists, else the built-in recorded H200, always saying which and why.
#include <optional>
#include <string>
#include <string_view>
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
// `what` is what a live read is for (sources/live_topology.hpp).
ChosenSnapshot choose_snapshot(const std::optional<std::string>& requested, const MachineRoots& roots = {},
                               LiveRead what = LiveRead::full);

// The GPU `index` of a chosen snapshot; throws UserError naming the valid range.
const Gpu& select_gpu(const ChosenSnapshot& chosen, int index);

// The GPU a `--gpu` value names, as `nvidia-smi -i` takes it: an index ("0"), a UUID ("GPU-8d3c...", or a
// prefix of one that names a single GPU), or a PCI bus id ("0000:17:00.0", "17:00.0", any case). Returns
// its index in the snapshot; throws UserError (one line, listing what there is) when it names none or several.
int gpu_index(const ChosenSnapshot& chosen, std::string_view spec);

}  // namespace gpupart
