#pragma once
// Whether a directory may serve an MPS control daemon as its pipe or log directory. Whoever owns the pipe
// directory (or may write it) can replace the daemon's `control` socket and pose as the daemon to every
// client; whoever owns the log directory can plant links where the daemon writes. So a daemon's directories
// must be real directories owned by the user the daemon runs as and writable by nobody else: the per-GPU
// units' (mps_units.hpp) and NVIDIA's defaults in /tmp alike, where any user can make the name first.
#include <optional>
#include <string>

#include <sys/types.h>

namespace gpupart {

// Why `path` cannot be such a directory for a daemon of `owner` (one line naming the path), or nullopt.
// A missing path is reported too (errno text); lstat: a symlink is never followed.
std::optional<std::string> mps_directory_problem(const std::string& path, uid_t owner);

// Makes `path` (mode 0755, parents as needed) when it is missing, then checks it for a daemon of this
// user: UserError in one line, naming `role` ("pipe", "log"), before any daemon is started.
void prepare_mps_directory(const std::string& path, const std::string& role);

}  // namespace gpupart
