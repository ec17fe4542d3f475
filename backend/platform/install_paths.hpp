#pragma once
// Where gpupart's programs find each other. Installed (FHS), relative to <prefix>/bin where gpupart and
// gpupart-gui live: the helpers (gpupart-probe, gpupart-render, gpupart-demo-worker) in
// <prefix>/libexec/gpupart/ and the shim in <prefix>/lib/<multiarch>/gpupart/, private directories, so
// nothing else is put on PATH or the linker's search path. In a build tree every program is in
// build/<preset>/app/ and the shim in build/<preset>/lib/. Relative to the running executable, so a
// prefix other than /usr works too. An environment variable names the file instead (tests, odd layouts).
#include <filesystem>
#include <string>

namespace gpupart {

// $variable when set (it must exist), else the helper `name` next to `exe` (build tree), else in the
// installed libexec directory. Throws UserError naming every place looked in.
std::filesystem::path find_helper(const std::filesystem::path& exe, const std::string& name, const char* variable);
// $GPUPART_SHIM when set, else the installed shim directory, else build/<preset>/lib/. Throws UserError.
std::filesystem::path find_shim_library(const std::filesystem::path& exe);

// Where gpupart_spank.so is for the gpupart at `exe`: <prefix>/lib/<multiarch>/slurm-wlm/ (Debian's Slurm
// PluginDir) relative to its bin/, where the package put it, or build/<preset>/lib/ beside a build tree's
// app/. When neither exists (the plugin not installed), the installed place, where this prefix's package
// puts it: the path is only printed (`gpupart slurm conf`), and --plugin names another.
std::filesystem::path find_slurm_plugin(const std::filesystem::path& exe);

// The running executable (/proc/self/exe).
std::filesystem::path running_executable();

}  // namespace gpupart
