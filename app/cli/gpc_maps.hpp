#pragma once
// The GPC map files that gpupart commands reading a topology leave for programs that partition themselves
// (libgpupart.so's libsmctrl_get_gpc_info): one per GPU with a real UUID, in the caller's registry directory.
#include <string>
#include <vector>

#include "snapshot/snapshot_choice.hpp"

namespace gpupart::cli {

// Writes the map of every GPU of `chosen` that can give one (a real UUID, mask bits and GPCs known) and
// returns the paths written. A GPU that cannot is skipped (gpupart gpcs says why); a write that fails is
// one warning line on stderr, never an error of the command that reads the topology.
std::vector<std::string> write_gpc_maps(const ChosenSnapshot& chosen);

}  // namespace gpupart::cli
