#include "curve_paths.hpp"

#include <cstdlib>

#include "model/user_error.hpp"
#include "platform/user_names.hpp"

namespace gpupart::cli {

std::string curve_directory() {
    if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && state[0] == '/')
        return std::string(state) + "/gpupart/curves";
    const char* home = std::getenv("HOME");
    if (home == nullptr || home[0] == '\0') throw UserError("cannot find where curves are kept: HOME is not set (set XDG_STATE_HOME)");
    return std::string(home) + "/.local/state/gpupart/curves";
}

CurveStore curve_store() { return CurveStore{curve_directory()}; }

CurveIdentity curve_identity(const ProcessState& process, const SystemState& state) {
    return CurveIdentity{process.command, user_name(process.uid), state.gpu_uuid};
}

}  // namespace gpupart::cli
