#include "controller/finding.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {

std::string_view to_string(Severity severity) {
    switch (severity) {
        case Severity::error: return "error";
        case Severity::warning: return "warning";
        case Severity::info: return "note";
    }
    return "note";
}

Finding refusal(std::string id, std::string rule, std::string message) {
    return {Severity::error, std::move(rule), std::move(message), std::move(id)};
}

bool has_error(const std::vector<Finding>& findings) {
    return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::error; });
}

std::string finding_line(const Finding& finding) {
    // Messages quote command lines and file names (anyone's): escaped here, raw in findings_json.
    // The id names its entry in docs/rules.md (what it means, why, what to do); the rule is a short reference.
    if (finding.id.empty()) return fmt::format("{}: {} [{}]", to_string(finding.severity), one_line(finding.message), finding.rule);
    return fmt::format("{}: {} [{}; {}]", to_string(finding.severity), one_line(finding.message), finding.id, finding.rule);
}

nlohmann::ordered_json findings_json(const std::vector<Finding>& findings) {
    auto out = nlohmann::ordered_json::array();
    for (const Finding& f : findings)
        out.push_back({{"severity", std::string(to_string(f.severity))}, {"id", f.id}, {"rule", f.rule}, {"message", f.message}});
    return out;
}

}  // namespace gpupart
