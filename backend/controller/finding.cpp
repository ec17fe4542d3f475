#include "controller/finding.hpp"

#include <algorithm>
#include <map>

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

std::vector<Finding> bounded(std::vector<Finding> findings, std::size_t per_id) {
    std::map<std::string, std::size_t> seen;  // by id
    std::map<std::string, std::pair<Finding, std::size_t>> left_out;  // by id: the first left out, how many
    std::vector<Finding> kept;
    for (Finding& finding : findings) {
        if (++seen[finding.id] <= per_id) {
            kept.push_back(std::move(finding));
            continue;
        }
        auto [it, fresh] = left_out.try_emplace(finding.id, finding, 0);
        ++it->second.second;
        if (finding.is_new) it->second.first.is_new = true;
        if (finding.severity < it->second.first.severity) it->second.first.severity = finding.severity;  // error first
    }
    for (auto& [id, more] : left_out) {
        Finding summary = more.first;
        summary.message = fmt::format("and {} more {} finding{} like the above: not shown (at most {} of each)", more.second,
                                      id.empty() ? "such" : id, more.second == 1 ? "" : "s", per_id);
        kept.push_back(std::move(summary));
    }
    return kept;
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
