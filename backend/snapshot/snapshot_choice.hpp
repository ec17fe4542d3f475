#pragma once
// Which snapshot a front end shows when the user names none: live sources where a GPU exists (once
// the live readers are built), else the built-in recorded H200, always saying which and why.
#include <optional>
#include <string>

#include "model/gpu.hpp"

namespace gpupart {

struct ChosenSnapshot {
    Snapshot snapshot;
    std::string origin;  // "builtin:h200" or a file path
    bool builtin = false;
    std::string why;     // one line for the user: why this snapshot is shown
};

// `requested` is what --snapshot said (a path or builtin:NAME), if anything. Throws UserError.
ChosenSnapshot choose_snapshot(const std::optional<std::string>& requested, const std::string& sysfs_root = "/sys");

// The GPU `index` of a chosen snapshot; throws UserError naming the valid range.
const Gpu& select_gpu(const ChosenSnapshot& chosen, int index);

}  // namespace gpupart
