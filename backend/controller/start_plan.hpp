#pragma once
// A process about to start on some TPCs, checked before it exists: what `gpupart run` and a Slurm job
// step's placement both ask the rules before they start one. The newcomer has no pid yet, so the rules
// call it "the new process".
#include <string>
#include <vector>

#include "controller/finding.hpp"
#include "controller/system_state.hpp"

namespace gpupart {

struct Newcomer {
    unsigned uid = 0;
    std::string command;  // as the user would read it (a command line, or a job step's name)
    std::string job;      // the scheduler job step it belongs to ("slurm:12.0"), "" for none
    TpcMask mask;
};

struct StartPlan {
    SystemState with_newcomer;  // the state once it runs
    // What the rules say about that state, as a plan shows it: TPCs left to nobody are no finding here
    // (starting processes one by one leaves TPCs idle until the last one), nor is what MPS did before.
    std::vector<Finding> findings;
};

StartPlan plan_start(const SystemState& state, const Newcomer& newcomer);

}  // namespace gpupart
