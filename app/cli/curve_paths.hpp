#pragma once
// Where gpupart measure saves curves and gpupart plan reads them, and whose curve a process has.
#include <string>

#include "controller/system_state.hpp"
#include "curve_store/curve_store.hpp"

namespace gpupart::cli {

// The store in default_curve_directory(): the one the app's Scaling panel and gpupart top read.
CurveStore curve_store();
// A process's curve identity on `state`'s GPU: its command line and user, never its pid, so that the
// curve still applies after the program restarts.
CurveIdentity curve_identity(const ProcessState& process, const SystemState& state);
// The process `pid` on `state`'s GPU, for measure and plan; throws UserError pointing at `gpupart list`.
const ProcessState& measured_process(const SystemState& state, int pid);

}  // namespace gpupart::cli
