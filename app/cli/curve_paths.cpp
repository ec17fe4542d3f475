#include "curve_paths.hpp"

#include <fmt/format.h>

#include "curve_store/curve_store_path.hpp"
#include "model/user_error.hpp"
#include "platform/user_names.hpp"

namespace gpupart::cli {

CurveStore curve_store() { return CurveStore{default_curve_directory()}; }

CurveIdentity curve_identity(const ProcessState& process, const SystemState& state) {
    return CurveIdentity{process.command, user_name(process.uid), state.gpu_uuid};
}

const ProcessState& measured_process(const SystemState& state, int pid) {
    const ProcessState* process = find_process(state, pid);
    if (process == nullptr)
        throw UserError(fmt::format("process {} is not a live partitioned process on GPU {} (see `gpupart list`)", pid, state.gpu_uuid));
    return *process;
}

}  // namespace gpupart::cli
