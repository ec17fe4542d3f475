#pragma once
// Which MPS control daemon serves a GPU. packaging/system/gpupart-mps@.service runs one daemon per GPU,
// named by the GPU's UUID, with its pipe directory in /run/gpupart-mps/<uuid> and its log (the daemon's
// and its servers' lines, one file: it runs with -f) in /var/log/gpupart/mps/<uuid>/control.log. gpupart
// run, gpupart mps status and the controller's MPS findings use that daemon for the GPU they work on.
#include <string>
#include <vector>

#include "platform/mps_control.hpp"

#include <sys/types.h>

namespace gpupart {

// Where the units keep their directories; tests point them at a tree of their own.
struct MpsUnitRoots {
    std::string pipe = "/run/gpupart-mps";
    std::string log = "/var/log/gpupart/mps";
    uid_t owner = 0;  // a unit's pipe directory is trusted only when this user owns it (systemd: root)
};

struct MpsDirectories {
    std::string pipe;  // CUDA_MPS_PIPE_DIRECTORY for the daemon's clients and its control program
    std::string log;   // where its control.log (and server.log, for a daemon started with -d) are
    std::string unit;  // "gpupart-mps@<uuid>.service" when they are that unit's, else empty
};

// The directories of the MPS daemon for the GPU `uuid`, in this order:
//  1. $CUDA_MPS_PIPE_DIRECTORY when set: the user chose a daemon (with $CUDA_MPS_LOG_DIRECTORY or its default);
//  2. the unit's when its pipe directory exists for this GPU;
//  3. NVIDIA's default /tmp/nvidia-mps, with $CUDA_MPS_LOG_DIRECTORY or gpupart's default log directory.
// An empty `uuid` (not known) skips 2. A pipe directory there that is not a directory owned by
// `roots.owner` and writable by it alone would let its maker pose as the daemon: UserError, one line.
MpsDirectories mps_directories(const std::string& uuid, const MpsUnitRoots& roots = {});

// The GPU UUIDs named in the units' pipe root, sorted: those of every unit started since boot (it may have
// stopped since). mps_directories says, for each, whether its directory can be trusted.
std::vector<std::string> mps_unit_gpus(const MpsUnitRoots& roots = {});

// The daemon of every unit mps_unit_gpus names; none when $CUDA_MPS_PIPE_DIRECTORY chooses one daemon
// for every GPU. A directory mps_directories refuses is a daemon not running, with why in its detail.
struct MpsUnitStatus {
    std::string uuid;
    std::string unit;
    MpsState state;
};
std::vector<MpsUnitStatus> mps_unit_status(const MpsUnitRoots& roots = {});

}  // namespace gpupart
