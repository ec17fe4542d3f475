#pragma once
// "Give these TPCs to that process" and "release these TPCs", as the GUI's drag and drop and the
// terminal view's keys mean them: the receiver gains the TPCs (an unpartitioned receiver gets exactly
// them), every other partitioned process that held one loses it. A holder left with no real TPC makes
// the plan refused (rule no-real-tpc), so a drop can never starve a process.
#include <optional>
#include <vector>

#include "controller/controller.hpp"

namespace gpupart {

// `receiver` empty: release the TPCs from every holder. The action text names what was done
// ("give 0-3 to 1234", "release 9-16").
Plan plan_give(const Controller& controller, std::optional<ProcessRef> receiver, const TpcMask& tpcs);

// Releases `tpcs` from the processes of `from` only (the app's Delete on rows of its process table); the other
// holders keep them. Refused as plan_give is when one of them would keep no real TPC.
Plan plan_release_from(const Controller& controller, const TpcMask& tpcs, const std::vector<ProcessRef>& from);

}  // namespace gpupart
