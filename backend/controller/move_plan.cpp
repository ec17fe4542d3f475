#include "controller/move_plan.hpp"

#include <limits>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/pid.hpp"
#include "model/placement.hpp"

namespace gpupart {
namespace {

// The TPCs of one GPC, or of no known GPC (group index -1): the units partitions are packed into.
struct Group {
    int gpc = -1;
    TpcMask tpcs;
};

std::vector<Group> groups_of(const Gpu& gpu) {
    std::vector<Group> groups;
    for (const Gpc& gpc : gpu.gpcs) groups.push_back({gpc.index, gpc_tpcs(gpu, gpc.index)});
    groups.push_back({-1, undetermined_gpc_tpcs(gpu)});
    return groups;
}

// The live partitioned process `pid`, or nullptr with the refusal that says why not (`unpartitioned_advice`
// ends the sentence for a process that has no partition).
const ProcessState* partitioned_process(const SystemState& state, int pid, const char* unpartitioned_advice,
                                        std::vector<Finding>& refusals) {
    if (const auto problem = pid_problem(pid)) {
        refusals.push_back(refusal("no-such-process", "model/pid.hpp: a process id is 1 to 4194304", *problem));
        return nullptr;
    }
    const ProcessState* process = find_process(state, pid);
    if (process == nullptr)
        refusals.push_back(refusal("no-such-process", "controller", fmt::format("process {} is not a live partitioned process", pid)));
    else if (!process->partitioned)
        refusals.push_back(refusal("unpartitioned", "controller", fmt::format("process {} is not partitioned: {}", pid, unpartitioned_advice)));
    return process != nullptr && process->partitioned ? process : nullptr;
}

std::string pid_list(const std::vector<int>& pids) { return fmt::format("{}", fmt::join(pids, ",")); }

}  // namespace

std::optional<GrowChoice> choose_tpc_to_add(const Gpu& gpu, const TpcMask& own, const TpcMask& free) {
    const TpcMask usable = free & real_tpcs(gpu);
    if (usable.empty()) return std::nullopt;
    const std::vector<Group> groups = groups_of(gpu);
    // First choice: the GPC this process uses most that still has a free TPC (fills it towards whole).
    const Group* best = nullptr;
    int best_used = 0;
    for (const Group& group : groups) {
        const int used = (group.tpcs & own).count();
        if (used > best_used && !(group.tpcs & usable).empty()) {
            best = &group;
            best_used = used;
        }
    }
    const auto where = [&](const Group& group) { return group.gpc >= 0 ? gpc_name(group.gpc) : std::string("TPCs of no known GPC"); };
    if (best != nullptr)
        return GrowChoice{(best->tpcs & usable).bits().front(), fmt::format("a free TPC in {}, a GPC it already uses", where(*best))};
    // Then a GPC nobody uses at all: taking one from a GPC another process works in would make the two
    // share that GPC (rule partial-gpc), while a whole free GPC stays this process's alone.
    for (const Group& group : groups)
        if (group.gpc >= 0 && !(group.tpcs & real_tpcs(gpu)).empty() && (group.tpcs & real_tpcs(gpu) & ~usable).empty())
            return GrowChoice{(group.tpcs & usable).bits().front(),
                              fmt::format("a TPC of {}, which is wholly free: none of its own GPCs has a free TPC", where(group))};
    const int bit = place_tpcs_packed(gpu, 1, usable).bits().front();
    const Tpc* tpc = find_tpc(gpu, bit);
    return GrowChoice{bit, fmt::format("TPC {} of {}, which another process also uses: none of its own GPCs has a free TPC "
                                       "and no GPC is wholly free", bit,
                                       tpc && tpc->gpc ? gpc_name(*tpc->gpc) : std::string("no known GPC"))};
}

std::optional<int> tpc_to_add(const Gpu& gpu, const TpcMask& own, const TpcMask& free) {
    const auto choice = choose_tpc_to_add(gpu, own, free);
    return choice ? std::optional<int>(choice->tpc) : std::nullopt;
}

std::optional<int> tpc_to_remove(const Gpu& gpu, const TpcMask& own) {
    if ((own & real_tpcs(gpu)).count() <= 1) return std::nullopt;
    // The GPC it uses least (TPCs of no known GPC first on ties, then the higher GPC), highest bit.
    const std::vector<Group> groups = groups_of(gpu);
    const Group* least = nullptr;
    int least_used = std::numeric_limits<int>::max();
    for (const Group& group : groups) {
        const int used = (group.tpcs & own).count();
        if (used == 0) continue;
        const bool better = used < least_used || (used == least_used && (group.gpc == -1 || (least->gpc != -1 && group.gpc > least->gpc)));
        if (better) {
            least = &group;
            least_used = used;
        }
    }
    return (least->tpcs & own).bits().back();
}

Plan plan_grow(const Controller& controller, const std::vector<ProcessRef>& processes) {
    const SystemState& state = controller.state();
    TpcMask free = real_tpcs(state.gpu);
    for (const ProcessState& process : state.processes)
        if (process.partitioned) free &= ~process.mask;
    std::vector<MaskRequest> requests;
    std::vector<Finding> refusals;
    std::vector<Finding> why;  // which TPC each process gets, and why that one
    std::vector<int> pids;
    for (const ProcessRef& chosen : processes) {
        const int pid = chosen.pid;
        pids.push_back(pid);
        const ProcessState* process = partitioned_process(state, pid, "it may already run on every TPC", refusals);
        if (process == nullptr) continue;
        if (const auto choice = choose_tpc_to_add(state.gpu, process->mask, free)) {
            TpcMask after = process->mask;
            after.set(choice->tpc);
            free.set(choice->tpc, false);  // two processes grown at once never get the same TPC
            requests.push_back({pid, after, chosen.start_time});
            why.push_back({Severity::info, "controller", fmt::format("process {} gets {}", pid, choice->why), "grow-choice"});
        } else {
            refusals.push_back(refusal("no-free-tpc", "controller", fmt::format("no free TPC for process {}: every TPC is given to a process "
                                                                  "(mark TPCs in the floorplan to move them)", pid)));
        }
    }
    Plan plan = controller.plan_masks_refusing(requests, std::move(refusals), fmt::format("grow {} by 1 TPC", pid_list(pids)));
    plan.findings.insert(plan.findings.begin(), why.begin(), why.end());
    return plan;
}

Plan plan_shrink(const Controller& controller, const std::vector<ProcessRef>& processes) {
    const SystemState& state = controller.state();
    std::vector<MaskRequest> requests;
    std::vector<Finding> refusals;
    std::vector<int> pids;
    for (const ProcessRef& chosen : processes) {
        const int pid = chosen.pid;
        pids.push_back(pid);
        const ProcessState* process = partitioned_process(state, pid, "give it TPCs first", refusals);
        if (process == nullptr) continue;
        if (const auto bit = tpc_to_remove(state.gpu, process->mask)) {
            TpcMask after = process->mask & real_tpcs(state.gpu);
            after.set(*bit, false);
            requests.push_back({pid, after, chosen.start_time});
        } else {
            refusals.push_back(refusal("last-tpc", "controller", fmt::format("process {} has one TPC left: a partition needs at least one", pid)));
        }
    }
    return controller.plan_masks_refusing(requests, std::move(refusals), fmt::format("shrink {} by 1 TPC", pid_list(pids)));
}

}  // namespace gpupart
