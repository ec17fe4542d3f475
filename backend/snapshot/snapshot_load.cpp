// Loading by name lives apart from parsing and saving, so the snapshot generator can save
// snapshots without linking the built-in ones it is about to write.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "model/user_error.hpp"
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
    std::ifstream in(where, std::ios::binary);
    if (!in) throw UserError(fmt::format("snapshot {}: cannot open: {}", where, std::strerror(errno)));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw UserError(fmt::format("snapshot {}: read failed: {}", where, std::strerror(errno)));
    return parse_snapshot_text(text.str(), where);
}

}  // namespace gpupart
