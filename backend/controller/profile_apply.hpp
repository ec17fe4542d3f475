#pragma once
// Applying a profile: its rules change the matching processes running now (a controller plan, with
// findings and a journal entry) and are armed in the registry for processes that start later (the
// rules table the shim reads at registration: no daemon needed).
#include <string>
#include <vector>

#include "controller/controller.hpp"
#include "controller/profile.hpp"
#include "registry/registry_layout.h"

namespace gpupart {

struct ProfileApplication {
    Plan plan;                          // for the processes running now, and the rules table it arms
    gpupart_rules_file rules{};         // for the processes that start later (plan.rules arms it)
    std::vector<std::string> armed;     // one line per armed rule
    std::vector<std::string> not_armed; // one line per rule that cannot apply to later processes, and why
};

ProcessFacts facts_of(const ProcessState& process);

// Plans a profile against the controller's current state. Errors (a rule whose TPCs cannot be placed)
// are findings of the plan, so nothing is applied or armed. Applying the plan arms the rules (or, with
// none to arm, disarms the caller's) and journals both, so `gpupart undo` reverts both.
ProfileApplication plan_profile(const Controller& controller, const Profile& profile, int gpu_index);

// What a profile would change now, process by process ("process 12 (cmd): TPCs 9-16 -> 54-62").
std::vector<std::string> profile_diff(const Controller& controller, const Profile& profile, int gpu_index);

}  // namespace gpupart
