#include "controller/give_plan.hpp"

#include <fmt/format.h>

#include "model/gpu_queries.hpp"

namespace gpupart {

Plan plan_give(const Controller& controller, std::optional<int> receiver, const TpcMask& tpcs) {
    const SystemState& state = controller.state();
    const TpcMask moved = tpcs & real_tpcs(state.gpu);
    std::vector<MaskRequest> requests;
    if (receiver) {
        const ProcessState* process = find_process(state, *receiver);
        // An unknown receiver still gets a request, so the controller says why it is refused.
        const TpcMask after = process != nullptr && process->partitioned ? process->mask | moved : moved;
        requests.push_back({*receiver, after});
    }
    for (const ProcessState& holder : state.processes) {
        if (!holder.partitioned || (receiver && holder.pid == *receiver)) continue;
        if ((holder.mask & moved).empty()) continue;
        requests.push_back({holder.pid, holder.mask & ~moved});
    }
    const std::string action = receiver ? fmt::format("give {} to {}", moved.to_list(), *receiver)
                                        : fmt::format("release {}", moved.to_list());
    Plan plan = controller.plan_masks(requests, action);
    if (!receiver && requests.empty())
        plan.findings.push_back({Severity::info, "controller",
                                 fmt::format("TPCs {} are already free: nothing to change", moved.to_list()), "no-change"});
    return plan;
}

}  // namespace gpupart
