#include "snapshot/snapshot_file.hpp"

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/safe_file.hpp"
#include "snapshot/snapshot_json.hpp"

namespace gpupart {

Snapshot parse_snapshot_text(std::string_view text, const std::string& origin) {
    nlohmann::ordered_json document;
    try {
        document = nlohmann::ordered_json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::parse_error& error) {
        // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
        std::string what = error.what();
        if (auto at = what.find("parse error"); at != std::string::npos) what = what.substr(at);
        throw UserError(fmt::format("snapshot {}: not valid JSON: {}", origin, what));
    }
    try {
        return snapshot_from_json(document);
    } catch (const SnapshotFormatError& error) {
        throw UserError(fmt::format("snapshot {}: field {}", origin, error.what()));
    }
}

std::string snapshot_text(const Snapshot& snapshot) { return snapshot_to_json(snapshot).dump(2) + "\n"; }

void save_snapshot(const Snapshot& snapshot, const std::string& path) {
    const std::string text = snapshot_text(snapshot);
    // A new file with a random name, renamed over the target: a device node or symlink at the target is
    // refused, a planted name is never written through, the old file stays whole if the write fails.
    replace_file(path, text, 0644, "snapshot");
}

}  // namespace gpupart
