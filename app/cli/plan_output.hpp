#pragma once
// How partitioning commands (set, undo, profile apply) report a plan: the changes, the controller's
// findings, and what was applied. A refused plan prints its errors, one line each, on stderr.
#include <optional>

#include <nlohmann/json.hpp>

#include "controller/controller.hpp"

namespace gpupart::cli {

// Prints the plan and returns the exit code: 1 when refused, else 0.
int report_plan(const Plan& plan, const Gpu& gpu, bool json, bool dry_run, const std::optional<JournalEntry>& applied);
nlohmann::ordered_json plan_json(const Plan& plan, const Gpu& gpu);

// set/undo/profile apply share this: refused -> report; dry run -> report; else apply, then report.
int plan_and_apply(Controller& controller, const Plan& plan, bool json, bool dry_run);

}  // namespace gpupart::cli
