#pragma once
// `profile save` and the GUI's "Save current as...": the partitions running now, written down as a
// profile. Shared so both front ends save the same rules for the same processes.
#include <string>

#include "controller/profile.hpp"
#include "controller/system_state.hpp"

namespace gpupart {

// Every partitioned process as a rule that matches its executable and user (and its exact command line
// where two of them share both), giving it the TPCs it has now. Unpartitioned processes get no rule:
// "may use every TPC" is what a process without a rule gets anyway.
Profile capture_profile(const SystemState& state, const std::string& name);
// A glob that matches exactly `text`: fnmatch(3) treats * ? [ and the backslash as patterns, so each is quoted with a
// backslash (a saved command line must match only itself).
std::string escaped_glob(const std::string& text);

}  // namespace gpupart
