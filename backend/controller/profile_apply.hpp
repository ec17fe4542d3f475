#pragma once
// Applying a profile: its rules change the matching processes running now (a controller plan, with
// findings and a journal entry) and are armed in the registry for processes that start later (the
// rules table the shim reads at registration: no daemon needed).
#include <cstdint>
#include <optional>
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

// How the running processes and the caller's armed rules stand against a profile: what `profile diff`
// shows, and whether it has drifted (exit 1, as `nvidia-mig-parted assert` does).
struct ProcessDrift {
    int pid = 0;
    std::uint64_t start_time = 0;
    std::string command;                       // raw: escape (one_line) to show it
    std::string now_tpcs;                      // "9-16", or "all" when not partitioned
    std::optional<std::string> profile_tpcs;   // what the profile gives it; nullopt when no rule matches
};
struct ProfileDrift {
    std::vector<ProcessDrift> processes;
    std::optional<std::string> rules;  // "rules for processes that start later: X -> Y" when applying would re-arm them
    std::vector<std::string> errors;   // why the profile cannot be applied now (each also counts as drift)
    bool drifted = false;              // a matched process on other TPCs, rules not armed as the profile says, or an error
};
ProfileDrift profile_drift(const Controller& controller, const Profile& profile, int gpu_index);

// What a profile would change now, process by process ("process 12 (cmd): TPCs 9-16 -> 54-62").
std::vector<std::string> profile_diff(const Controller& controller, const Profile& profile, int gpu_index);

}  // namespace gpupart
