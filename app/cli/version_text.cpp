#include "version_text.hpp"

#include <fmt/format.h>

#include "cli_common.hpp"
#include "gpupart_git_id.h"  // generated at build time: cmake/git_id.cmake
#include "model/user_error.hpp"
#include "platform/gpu_presence.hpp"
#include "platform/proc_file.hpp"
#include "registry/registry_layout.h"
#include "sources/rm_driver_branch.hpp"

namespace gpupart::cli {
namespace {

// The loaded kernel module's version (the same string nvidia-smi and NVML report), from sysfs: cheap,
// and it answers even when NVML is missing or refuses.
std::string driver_line(const std::string& sysfs) {
    if (find_nvidia_gpus(sysfs).empty()) return "";  // no GPU: no driver line (the contract of --version)
    const std::string version = read_first_line(sysfs + "/module/nvidia/version");
    if (version.empty()) return "\ndriver: NVIDIA GPU present but the nvidia kernel module is not loaded";
    const auto branch = driver_branch(version);
    return fmt::format("\ndriver {} (branch {})", one_line(version), branch ? *branch : "unknown");
}

}  // namespace

std::string version_text() {
    return fmt::format("gpupart {} (git {})\nregistry layout {}{}", GPUPART_VERSION, GPUPART_GIT_ID,
                       GPUPART_REGISTRY_LAYOUT_VERSION, driver_line(machine_roots().sysfs));
}

}  // namespace gpupart::cli
