#pragma once
// What `gpupart --version` prints: enough for a bug report or an inventory script to know which build,
// which shared-memory layout it speaks to shims, and which driver branch it runs on.
#include <string>

namespace gpupart::cli {

// "gpupart 0.1.0 (git f01f379c2a1b)\nregistry layout 3\ndriver 580.159.04 (branch 580)" — the driver line
// only when an NVIDIA GPU is present (read from sysfs; no driver library is loaded for it).
std::string version_text();

}  // namespace gpupart::cli
