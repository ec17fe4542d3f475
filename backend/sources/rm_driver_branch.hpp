#pragma once
// Which NVIDIA driver branches' RM parameter layouts gpupart has verified. Layouts change between
// branches (GLOBAL_SM_ORDER is 6168, 7192 and 9240 bytes in 570, 575 and 580) and the driver demands the
// exact size, so an unverified branch is refused, never read with a guessed layout.
#include <optional>
#include <string>

namespace gpupart {

// "580" for "580.159.04"; nullopt for a string that is not a driver version.
std::optional<std::string> driver_branch(const std::string& version);
// Empty when `version` is a verified branch; else one line saying why it is not read.
std::string unverified_driver_reason(const std::string& version);

}  // namespace gpupart
