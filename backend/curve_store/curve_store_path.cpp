#include "curve_store/curve_store_path.hpp"

#include <cstdlib>

#include "model/user_error.hpp"
#include "platform/xdg_directories.hpp"

namespace gpupart {

std::string default_curve_directory() {
    const auto state = xdg_base_directory(XdgBase::state);
    if (!state) throw UserError("cannot find where curves are kept: HOME is not set (set XDG_STATE_HOME)");
    return *state + "/gpupart/curves";
}

}  // namespace gpupart
