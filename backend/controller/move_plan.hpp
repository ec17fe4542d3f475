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

// One more TPC for each process, free (held by no partitioned process): in a GPC it already uses where
// possible, else in a GPC no other process uses (so partitions stay GPC-packed and share no GPC), else
// anywhere; each choice is said in an info finding ("grow-choice"). Refused when no TPC is free.
Plan plan_grow(const Controller& controller, const std::vector<ProcessRef>& processes);

// One TPC less for each process, taken from the GPC it uses least, so whole GPCs stay whole.
// Refused for a process with one TPC left.
Plan plan_shrink(const Controller& controller, const std::vector<ProcessRef>& processes);

// The TPC `plan_grow` adds to `own` out of `free`, and why it was chosen; nullopt when `free` has no real TPC.
struct TpcChoice {
    int tpc = 0;
    std::string why;  // "gpc1, which it uses already" / "gpc3, a GPC no other process uses" / ...
};
std::optional<TpcChoice> choose_tpc_to_add(const Gpu& gpu, const TpcMask& own, const TpcMask& free);
std::optional<int> tpc_to_add(const Gpu& gpu, const TpcMask& own, const TpcMask& free);
// The TPC `plan_shrink` removes from `own`; nullopt when `own` has at most one real TPC.
std::optional<int> tpc_to_remove(const Gpu& gpu, const TpcMask& own);

}  // namespace gpupart
