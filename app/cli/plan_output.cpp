#include "plan_output.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"

namespace gpupart::cli {
namespace {

std::string tpcs_text(bool partitioned, const TpcMask& mask) { return partitioned ? mask.to_list() : "all"; }

}  // namespace

nlohmann::ordered_json plan_json(const Plan& plan, const Gpu& gpu) {
    auto changes = nlohmann::ordered_json::array();
    for (const auto& c : plan.changes)
        changes.push_back({{"pid", c.pid},
                           {"start_time", c.start_time},
                           {"command", c.command},
                           {"before_tpcs", tpcs_text(c.before_partitioned, c.before)},
                           {"after_tpcs", tpcs_text(c.after_partitioned, c.after)},
                           {"after_mask", c.after.to_hex_padded()},
                           {"tpc_count", c.after.count()},
                           {"sm_count", sms_of(gpu, c.after).size()}});
    nlohmann::ordered_json out{{"action", plan.action}, {"refused", plan.refused()}, {"changes", changes}};
    out["rules"] = plan.rules ? nlohmann::ordered_json{{"before", rules_summary(plan.rules->before)}, {"after", rules_summary(plan.rules->after)}}
                              : nlohmann::ordered_json(nullptr);
    out["findings"] = findings_json(plan.findings);
    for (std::size_t i = 0; i < plan.findings.size(); ++i) out["findings"][i]["new"] = plan.findings[i].is_new;
    return out;
}

int report_plan(const Plan& plan, const Gpu& gpu, bool json, bool dry_run, const std::optional<JournalEntry>& applied) {
    if (json) {
        auto out = plan_json(plan, gpu);
        out["dry_run"] = dry_run;
        out["applied"] = applied.has_value();
        out["journal_id"] = applied ? nlohmann::ordered_json(applied->id) : nlohmann::ordered_json(nullptr);
        fmt::print("{}\n", json_answer(out));
        return plan.refused() ? 1 : 0;
    }
    if (plan.refused()) {
        for (const Finding& finding : plan.findings)
            if (finding.severity == Severity::error) fmt::print(stderr, "gpupart: {} [{}; {}]; nothing changed\n", one_line(finding.message), finding.id, finding.rule);
        return 1;
    }
    for (const auto& c : plan.changes)
        fmt::print("process {} ({}): TPCs {} -> {} ({} TPCs, {} SMs)\n", c.pid, one_line(c.command, 60),
                   tpcs_text(c.before_partitioned, c.before), tpcs_text(c.after_partitioned, c.after), c.after.count(),
                   sms_of(gpu, c.after).size());
    if (plan.rules)
        fmt::print("{}\n", one_line(rules_change_text(*plan.rules)));
    // What the plan brings is marked new; what is already so without it is said once, as such.
    for (const Finding& finding : plan.findings) fmt::print("{}{}\n", finding.is_new ? "new " : "", finding_line(finding));
    if (dry_run)
        fmt::print("dry run: nothing applied\n");
    else if (applied)
        fmt::print("applied as #{}, from each process's next kernel launch; `gpupart undo` reverts it\n", applied->id);
    return 0;
}

int plan_and_apply(Controller& controller, const Plan& plan, bool json, bool dry_run) {
    if (plan.refused() || dry_run) return report_plan(plan, controller.state().gpu, json, dry_run, std::nullopt);
    const Applied applied = controller.apply(plan);
    // Said once: a note the plan already shows as a finding (undo reads the journal to plan) is not repeated.
    for (const auto& note : applied.notes)
        if (std::none_of(plan.findings.begin(), plan.findings.end(), [&](const Finding& f) { return f.message == note; }))
            fmt::print(stderr, "gpupart: note: {}\n", note);
    return report_plan(applied.plan, controller.state().gpu, json, false, applied.entry);
}

}  // namespace gpupart::cli
