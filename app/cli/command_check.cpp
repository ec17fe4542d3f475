// gpupart check: the controller's findings about the partitions as they are now (overlaps, idle TPCs,
// MPS, shared copy engines...), without changing anything. What the GUI and terminal view show live.
// With --fail-on it is also a test for scripts and monitoring: non-zero when a finding that bad exists.
#include <algorithm>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "csv_output.hpp"
#include "exit_codes.hpp"

namespace gpupart::cli {
namespace {

const std::vector<CsvColumn<Finding>>& finding_columns() {
    using F = const Finding&;
    static const std::vector<CsvColumn<Finding>> columns = {
        {"severity", [](F f) { return std::string(to_string(f.severity)); }},
        {"id", [](F f) { return f.id; }},
        {"rule", [](F f) { return f.rule; }},
        {"message", [](F f) { return f.message; }},
    };
    return columns;
}

constexpr const char* kCheckDefaultFields = "severity,id,rule,message";

// Severity is ordered error < warning < info (finding.hpp): "at least as bad" is "<=".
bool fails(const std::vector<Finding>& findings, std::optional<Severity> fail_on) {
    return fail_on && std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.severity <= *fail_on; });
}

}  // namespace

Command add_check_command(CLI::App& app) {
    struct CheckOptions {
        SnapshotOptions snapshot;
        bool json = false;
        CsvOptions csv;
        std::string fail_on;  // "", "warning" or "error"
    };
    auto options = std::make_shared<CheckOptions>();
    CLI::App* check = app.add_subcommand("check", "Show the controller's findings about the current partitions");
    CLI::Option* json = check->add_flag("--json", options->json, "Machine-readable output");
    add_csv_options(*check, options->csv, csv_names(finding_columns()), kCheckDefaultFields, json);
    check->add_option("--fail-on", options->fail_on,
                      "Exit 1 when a finding of this severity or worse exists: warning or error (default: exit 0 whatever is found)")
        ->check(CLI::IsMember({"warning", "error"}));
    add_snapshot_options(*check, options->snapshot);
    return {check, [options] {
                const Controller controller = make_controller(options->snapshot);
                const SystemState& state = controller.state();
                const std::vector<Finding> findings = check_result(state);
                const std::optional<Severity> fail_on = options->fail_on.empty() ? std::nullopt
                                                        : std::optional(options->fail_on == "error" ? Severity::error : Severity::warning);
                const int code = fails(findings, fail_on) ? kExitRefused : kExitOk;
                if (options->csv.wanted()) {
                    print_csv(options->csv, finding_columns(), kCheckDefaultFields, findings);
                    return code;
                }
                if (options->json) {
                    fmt::print("{}\n", json_answer(nlohmann::ordered_json{{"processes", state.processes.size()},
                                                              {"unreadable_slots", state.unreadable.size()},
                                                              {"mps_running", state.mps_running},
                                                              {"findings", findings_json(findings)}}));
                    return code;
                }
                fmt::print("{} partitioned process{}{} · MPS {}\n", state.processes.size(), state.processes.size() == 1 ? "" : "es",
                           state.unreadable.empty() ? "" : fmt::format(" and {} unreadable slot{}", state.unreadable.size(),
                                                                       state.unreadable.size() == 1 ? "" : "s"),
                           state.mps_running ? "running" : "not running");
                if (findings.empty()) fmt::print("no finding: nothing to warn about\n");
                for (const Finding& finding : findings) fmt::print("{}\n", finding_line(finding));
                return code;
            }};
}

}  // namespace gpupart::cli
