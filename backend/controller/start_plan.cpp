#include "controller/start_plan.hpp"

#include "controller/mps_findings.hpp"
#include "controller/rules.hpp"

namespace gpupart {

StartPlan plan_start(const SystemState& state, const Newcomer& newcomer) {
    StartPlan plan{state, {}};
    ProcessState process;
    process.uid = newcomer.uid;
    process.command = newcomer.command;
    process.job = newcomer.job;
    process.partitioned = true;
    process.mask = newcomer.mask;
    process.generation = 1;
    plan.with_newcomer.processes.push_back(std::move(process));
    for (Finding& finding : check_result(plan.with_newcomer))
        if (finding.id != "idle-tpcs" && belongs_in_plan(finding)) plan.findings.push_back(std::move(finding));
    return plan;
}

}  // namespace gpupart
