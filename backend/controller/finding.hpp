#pragma once
// What the controller says about a proposed change: one line each, with the rule it comes from.
// Errors refuse the change (nothing is applied); warnings and notes go with it.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpupart {

enum class Severity { error, warning, info };
std::string_view to_string(Severity severity);

struct Finding {
    Severity severity = Severity::info;
    std::string rule;     // a short reference: "Bakita & Anderson, RTAS 2024, rule R4"; docs/rules.md#<id> has the full one
    std::string message;  // one line a user can act on
    std::string id;       // stable name of the check for scripts and front ends: "overlap", "no-mps", ...
    // In a plan: true when the plan brings it (the state as it is does not have it); false for what is
    // already so, and always false for the state as it is (check_result).
    bool is_new = false;
    bool operator==(const Finding&) const = default;
};

bool has_error(const std::vector<Finding>& findings);
// At most `per_id` findings of each id (the first ones), and for each id with more, one more finding of
// its severity that says how many were left out: a finding per pair of processes stays readable, and
// bounded, however many processes there are.
inline constexpr std::size_t kFindingsPerId = 20;
std::vector<Finding> bounded(std::vector<Finding> findings, std::size_t per_id = kFindingsPerId);
// An error finding: what refuses a plan.
Finding refusal(std::string id, std::string rule, std::string message);
std::string finding_line(const Finding& finding);  // "warning: ... [no-mps; Bakita & Anderson, RTAS 2024, rule R4]"
nlohmann::ordered_json findings_json(const std::vector<Finding>& findings);

}  // namespace gpupart
