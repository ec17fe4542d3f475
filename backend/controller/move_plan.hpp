#pragma once
// The changes interactive front ends (gpupart top, the GUI) offer, planned through the controller:
// give TPCs to a process (give_plan.hpp), or grow/shrink a partition by one TPC.
// Each returns an ordinary Plan: its findings say what would happen, and a refused one changes nothing.
#include <optional>
#include <string>
#include <vector>

#include "controller/controller.hpp"
#include "controller/give_plan.hpp"  // plan_give: give TPCs to a process, or release them

namespace gpupart {

// One more TPC for each process: a free one (held by no partitioned process) in a GPC it already
// uses where possible, else in a wholly free GPC, so partitions stay GPC-packed and share no GPC.
// A note per process says which TPC and why. Refused when no TPC is free.
Plan plan_grow(const Controller& controller, const std::vector<ProcessRef>& processes);

// One TPC less for each process, taken from the GPC it uses least, so whole GPCs stay whole.
// Refused for a process with one TPC left.
Plan plan_shrink(const Controller& controller, const std::vector<ProcessRef>& processes);

// The TPC `plan_grow` adds to `own` out of `free`, and why that one (the plan says it as a note): a free
// TPC in a GPC the process already uses, else one of a wholly free GPC, else any (GPC-packed); nullopt
// when `free` has no real TPC.
struct GrowChoice {
    int tpc = -1;
    std::string why;  // "a free TPC in gpc1, a GPC it already uses"
};
std::optional<GrowChoice> choose_tpc_to_add(const Gpu& gpu, const TpcMask& own, const TpcMask& free);
std::optional<int> tpc_to_add(const Gpu& gpu, const TpcMask& own, const TpcMask& free);
// The TPC `plan_shrink` removes from `own`; nullopt when `own` has at most one real TPC.
std::optional<int> tpc_to_remove(const Gpu& gpu, const TpcMask& own);

}  // namespace gpupart
