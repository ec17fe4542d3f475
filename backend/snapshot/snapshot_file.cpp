#include "snapshot/snapshot_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <unistd.h>

#include "model/user_error.hpp"
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
    const std::string temporary = fmt::format("{}.tmp.{}", path, ::getpid());
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out) throw UserError(fmt::format("export {}: cannot write: {}", path, std::strerror(errno)));
        out << text;
        out.flush();
        if (!out) {
            const int saved = errno;
            std::remove(temporary.c_str());
            throw UserError(fmt::format("export {}: write failed: {}", path, std::strerror(saved)));
        }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        const int saved = errno;
        std::remove(temporary.c_str());
        throw UserError(fmt::format("export {}: cannot replace the file: {}", path, std::strerror(saved)));
    }
}

}  // namespace gpupart
