#include "sources/source_status_text.hpp"

#include <fmt/format.h>

namespace gpupart {

std::string_view to_string(SourceState state) {
    switch (state) {
        case SourceState::ok: return "ok";
        case SourceState::absent: return "absent";
        case SourceState::refused: return "refused";
        case SourceState::needs_root: return "needs root";
        case SourceState::unsupported: return "unsupported";
        case SourceState::failed: return "failed";
        case SourceState::not_read: return "not read";
    }
    return "unknown";
}

std::string source_status_line(const SourceStatus& status) {
    return fmt::format("{} {}: {}", to_string(status.source), to_string(status.state), status.detail);
}

nlohmann::ordered_json source_status_to_json(const SourceStatus& status) {
    std::string state(to_string(status.state));
    for (char& c : state)
        if (c == ' ') c = '_';
    return nlohmann::ordered_json{{"source", std::string(to_string(status.source))}, {"state", state}, {"detail", status.detail}};
}

}  // namespace gpupart
