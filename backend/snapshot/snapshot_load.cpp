// Loading by name lives apart from parsing and saving, so the snapshot generator can save
// snapshots without linking the built-in ones it is about to write.
#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/safe_file.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart {

Snapshot load_snapshot(const std::string& where) {
    if (where.starts_with(kBuiltinPrefix)) {
        const std::string_view name = std::string_view(where).substr(kBuiltinPrefix.size());
        std::string known;
        for (const BuiltinSnapshot& builtin : builtin_snapshots()) {
            if (builtin.name == name) return parse_snapshot_text(builtin.json, where);
            known += (known.empty() ? "" : ", ") + std::string(kBuiltinPrefix) + std::string(builtin.name);
        }
        throw UserError(fmt::format("snapshot {}: no such built-in snapshot (there are: {})", where, known));
    }
    // A path the user typed: links are followed; a FIFO, device or directory is refused before any
    // read, and a file larger than any snapshot is refused rather than read into memory.
    const std::string text = read_regular_file(where, kMaxSnapshotBytes, Links::follow, "snapshot");
    return parse_snapshot_text(text, where);
}

}  // namespace gpupart
