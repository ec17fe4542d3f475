#include "curve_paths.hpp"

#include "curve_store/curve_store_path.hpp"
#include "platform/user_names.hpp"

namespace gpupart::cli {

CurveStore curve_store() { return CurveStore{default_curve_directory()}; }

CurveIdentity curve_identity(const ProcessState& process, const SystemState& state) {
    return CurveIdentity{process.command, user_name(process.uid), state.gpu_uuid};
}

}  // namespace gpupart::cli
