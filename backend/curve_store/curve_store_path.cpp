#include "curve_store/curve_store_path.hpp"

#include <cstdlib>

#include "model/user_error.hpp"

namespace gpupart {

std::string default_curve_directory() {
    if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && state[0] == '/')
        return std::string(state) + "/gpupart/curves";
    const char* home = std::getenv("HOME");
    if (home == nullptr || home[0] == '\0')
        throw UserError("cannot find where curves are kept: HOME is not set (set XDG_STATE_HOME)");
    return std::string(home) + "/.local/state/gpupart/curves";
}

}  // namespace gpupart
