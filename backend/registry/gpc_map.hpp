#pragma once
// GPC map files for programs that partition themselves (libgpupart.so's libsmctrl_get_gpc_info; layout in
// registry_layout.h, file rules in gpcs_file.h): built from a GPU's model, written into a user's registry
// directory by the commands that read topologies (`gpupart topology`, `gpupart run`, `gpupart gpcs --write`).
#include <string>

#include "model/gpu.hpp"
#include "registry/registry_layout.h"

namespace gpupart {

// Why `gpu` gives no map ("" when it does): it has no real UUID (a built-in recording), its mask bits are
// not known (no probe yet), or some TPC's GPC is not known.
std::string gpc_map_unavailable_reason(const Gpu& gpu);

// The map of `gpu`, GPCs with at least one TPC in gpupart's order; `source` (at most 31 bytes kept) says
// where the topology came from. Throws UserError with gpc_map_unavailable_reason.
gpupart_gpcs_file gpc_map_of(const Gpu& gpu, const std::string& source);

// Writes `map` whole into `user_dir` (gpupart_gpcs_write) and returns the file's path. Throws RegistryError
// (one line) when it cannot: a link or FIFO in its place, no permission, a full disk.
std::string write_gpc_map(const std::string& user_dir, const gpupart_gpcs_file& map);

}  // namespace gpupart
