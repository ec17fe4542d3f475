#include "platform/install_paths.hpp"

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "model/user_error.hpp"

// Both relative to the install prefix, from the build system (top-level CMakeLists.txt).
#ifndef GPUPART_LIBEXEC_SUBDIR
#error "GPUPART_LIBEXEC_SUBDIR must name the helpers' directory relative to the prefix"
#endif
#ifndef GPUPART_SHIM_SUBDIR
#error "GPUPART_SHIM_SUBDIR must name the shim's directory relative to the prefix"
#endif
#ifndef GPUPART_SLURM_PLUGIN_SUBDIR
#error "GPUPART_SLURM_PLUGIN_SUBDIR must name the SPANK plugin's directory relative to the prefix"
#endif

namespace gpupart {
namespace {

std::filesystem::path first_existing(const std::vector<std::filesystem::path>& candidates, const std::string& name,
                                     const char* variable) {
    for (const auto& candidate : candidates)
        if (std::filesystem::exists(candidate)) return candidate;
    std::string tried;
    for (const auto& candidate : candidates) tried += (tried.empty() ? "" : " or ") + candidate.string();
    throw UserError(fmt::format("{} not found: no {}; set {} to its path", name, tried, variable));
}

// The file $variable names, or nothing when it is unset or empty. A name that does not exist is an error,
// never a reason to look elsewhere.
std::filesystem::path from_environment(const char* variable) {
    const char* chosen = std::getenv(variable);
    if (chosen == nullptr || chosen[0] == '\0') return {};
    if (!std::filesystem::exists(chosen)) throw UserError(fmt::format("{}={}: no such file", variable, chosen));
    return std::filesystem::absolute(chosen);
}

}  // namespace

std::filesystem::path find_helper(const std::filesystem::path& exe, const std::string& name, const char* variable) {
    if (auto chosen = from_environment(variable); !chosen.empty()) return chosen;
    const auto bin = exe.parent_path();
    return first_existing({bin / name, (bin / ".." / GPUPART_LIBEXEC_SUBDIR / name).lexically_normal()},
                          name, variable);
}

std::filesystem::path find_shim_library(const std::filesystem::path& exe) {
    if (auto chosen = from_environment("GPUPART_SHIM"); !chosen.empty()) return chosen;
    const auto bin = exe.parent_path();
    return first_existing({(bin / ".." / GPUPART_SHIM_SUBDIR / "libgpupart-shim.so").lexically_normal(),
                           (bin / ".." / "lib" / "libgpupart-shim.so").lexically_normal()},
                          "libgpupart-shim.so", "GPUPART_SHIM");
}

std::filesystem::path find_slurm_plugin(const std::filesystem::path& exe) {
    const auto bin = exe.parent_path();
    const auto installed = (bin / ".." / GPUPART_SLURM_PLUGIN_SUBDIR / "gpupart_spank.so").lexically_normal();
    const auto build_tree = (bin / ".." / "lib" / "gpupart_spank.so").lexically_normal();
    if (!std::filesystem::exists(installed) && std::filesystem::exists(build_tree)) return build_tree;
    return installed;
}

std::filesystem::path running_executable() { return std::filesystem::read_symlink("/proc/self/exe"); }

}  // namespace gpupart
