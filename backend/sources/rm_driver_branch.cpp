#include "sources/rm_driver_branch.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

namespace gpupart {
namespace {

// Branches whose layouts were checked against the published headers and on a real GPU (tests/fixtures/live-h100 and live-h200 are such recordings).
constexpr std::array<std::string_view, 1> kVerifiedBranches = {"580"};

}  // namespace

std::optional<std::string> driver_branch(const std::string& version) {
    const auto dot = version.find('.');
    if (dot == 0 || dot == std::string::npos) return std::nullopt;
    const std::string branch = version.substr(0, dot);
    if (!std::all_of(branch.begin(), branch.end(), [](unsigned char c) { return std::isdigit(c); })) return std::nullopt;
    return branch;
}

std::string unverified_driver_reason(const std::string& version) {
    const auto branch = driver_branch(version);
    if (!branch) return fmt::format("the driver reports version '{}', which is not a driver version gpupart knows", version);
    if (std::find(kVerifiedBranches.begin(), kVerifiedBranches.end(), *branch) != kVerifiedBranches.end()) return {};
    return fmt::format("driver {}: gpupart's RM-control layouts are verified for driver branch {} only, not {} "
                       "(the driver demands exact parameter sizes; a guessed layout is never used)",
                       version, fmt::join(kVerifiedBranches, ", "), *branch);
}

}  // namespace gpupart
