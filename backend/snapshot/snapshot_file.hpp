#pragma once
// Loading and saving snapshots by name: a file path, or "builtin:NAME" for the recordings compiled
// into gpupart. Every failure is one UserError line naming the file and, for bad content, the field.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu.hpp"

namespace gpupart {

struct BuiltinSnapshot {
    std::string_view name;  // "h200": loaded as "builtin:h200"
    std::string_view json;  // the file resources/snapshots/NAME.json, compiled in
};

const std::vector<BuiltinSnapshot>& builtin_snapshots();  // generated from resources/snapshots/
inline constexpr std::string_view kDefaultBuiltin = "h200";
inline constexpr std::string_view kBuiltinPrefix = "builtin:";

// The largest snapshot file read: a recorded H200 is 70 KB; 16 MiB leaves room for thousands of
// processes and refuses /dev/zero-like input (and huge files) at once instead of filling memory.
inline constexpr std::size_t kMaxSnapshotBytes = 16u << 20;

// `where` is a path or "builtin:NAME"; a path must name a regular file. Throws UserError.
Snapshot load_snapshot(const std::string& where);
Snapshot parse_snapshot_text(std::string_view text, const std::string& origin);

// Writes atomically (a new randomly named file, then rename), so a reader never sees half a file; a
// target that is a device node, FIFO, directory or symlink is refused. Throws UserError.
void save_snapshot(const Snapshot& snapshot, const std::string& path);
std::string snapshot_text(const Snapshot& snapshot);  // the exact bytes save_snapshot writes

}  // namespace gpupart
