#include "platform/xdg_directories.hpp"

#include <cstdlib>

namespace gpupart {

std::optional<std::string> xdg_base_directory(XdgBase base) {
    const char* variable = base == XdgBase::cache ? "XDG_CACHE_HOME" : "XDG_STATE_HOME";
    if (const char* chosen = std::getenv(variable); chosen != nullptr && chosen[0] == '/') return std::string(chosen);
    const char* home = std::getenv("HOME");
    if (home == nullptr || home[0] == '\0') return std::nullopt;
    return std::string(home) + (base == XdgBase::cache ? "/.cache" : "/.local/state");
}

}  // namespace gpupart
