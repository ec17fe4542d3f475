#pragma once
// Findings about the MPS server itself rather than about partitions: a fatal GPU error that tore down its
// clients (docs/mps-fault-domain.md), and MPS logs gpupart could not read. One client's fatal error ends
// the work of every client of the server, partitioned or not (Bakita & Anderson, ECRTS 2025, pitfall 2), so `check`, `top` and
// the GUI say so instead of leaving users to read the server log.
#include <vector>

#include "controller/finding.hpp"
#include "controller/system_state.hpp"

namespace gpupart {

// One error per fatal error of the running MPS daemon, naming its time, the server and the clients it took
// down; a note when the logs could not be read. Nothing when MPS is not running.
std::vector<Finding> mps_findings(const SystemState& state);

// Whether a finding of check_result belongs to a plan (set, run, profile apply) too. What MPS did before
// the plan is not about the plan: it would refuse every change, and `gpupart run` would repeat every past
// fault at each start (seen on the H100). `check`, `top` and the GUI show it.
bool belongs_in_plan(const Finding& finding);

}  // namespace gpupart
