#include "controller/give_plan.hpp"

#include <fmt/format.h>

#include "model/gpu_queries.hpp"

namespace gpupart {
Plan plan_give(const Controller& controller, std::optional<ProcessRef> receiver, const TpcMask& tpcs) {
    const SystemState& state = controller.state();
    const TpcMask real = real_tpcs(state.gpu);
    const TpcMask moved = tpcs & real;
    const std::string what = moved.empty() ? tpcs.to_list() : moved.to_list();
    const std::string action = receiver ? fmt::format("give {} to {}", what, receiver->pid) : fmt::format("release {}", what);
    std::vector<MaskRequest> requests;
    std::vector<Finding> refusals;
    if (moved.empty()) {
        refusals.push_back(refusal("no-real-tpc", "controller", fmt::format("nothing to {}: TPCs {} are holes, not real TPCs (see docs/rules.md#no-real-tpc)", receiver ? "give" : "release", what)));
    } else {
        if (receiver) {
            const ProcessState* process = find_process(state, receiver->pid);
            // An unknown receiver still gets a request, so the controller says precisely why it is refused.
            const TpcMask after = process != nullptr && process->partitioned ? process->mask | moved : moved;
            requests.push_back({receiver->pid, after, receiver->start_time});
        }
        for (const ProcessState& holder : state.processes) {
            if (!holder.partitioned || (receiver && holder.pid == receiver->pid)) continue;
            if ((holder.mask & moved).empty()) continue;
            const TpcMask left = holder.mask & ~moved;
            if ((left & real).empty())
                refusals.push_back(refusal("last-tpcs", "controller", fmt::format("process {} ({}) holds only TPCs being {}: it would "
                                                                   "keep none; give it other TPCs first",
                                                                   holder.pid, holder.command.substr(0, 40),
                                                                   receiver ? "given away" : "released")));
            else
                requests.push_back({holder.pid, left, holder.start_time});
        }
    }
    if (!receiver && requests.empty() && refusals.empty())
        refusals.push_back(refusal("no-change", "controller", fmt::format("TPCs {} are already free: nothing to change", what)));
    return controller.plan_masks_refusing(requests, std::move(refusals), action);
}

Plan plan_release_from(const Controller& controller, const TpcMask& tpcs, const std::vector<ProcessRef>& from) {
    const SystemState& state = controller.state();
    const TpcMask real = real_tpcs(state.gpu);
    const TpcMask moved = tpcs & real;
    std::string pids;
    for (const ProcessRef& ref : from) pids += (pids.empty() ? "" : ",") + std::to_string(ref.pid);
    const std::string action = fmt::format("release {} from {}", moved.to_list(), pids);
    std::vector<MaskRequest> requests;
    std::vector<Finding> refusals;
    for (const ProcessRef& ref : from) {
        const ProcessState* holder = find_process(state, ref.pid);
        if (holder == nullptr || holder->start_time != ref.start_time) {
            refusals.push_back(refusal(holder == nullptr ? "no-such-process" : "process-replaced", "controller",
                                        fmt::format("process {} has exited since it was chosen", ref.pid)));
            continue;
        }
        if (!holder->partitioned || (holder->mask & moved).empty()) continue;
        const TpcMask left = holder->mask & ~moved;
        if ((left & real).empty())
            refusals.push_back(refusal("last-tpcs", "controller", fmt::format("process {} ({}) holds only TPCs being released: it "
                                                               "would keep none; give it other TPCs first",
                                                               holder->pid, holder->command.substr(0, 40))));
        else
            requests.push_back({holder->pid, left, holder->start_time});
    }
    if (requests.empty() && refusals.empty())
        refusals.push_back(refusal("no-change", "controller", fmt::format("none of processes {} holds TPCs {}: nothing to release", pids, moved.to_list())));
    return controller.plan_masks_refusing(requests, std::move(refusals), action);
}

}  // namespace gpupart
