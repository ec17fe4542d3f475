// gpupart check: the controller's findings about the partitions as they are now (overlaps, idle TPCs,
// MPS, shared copy engines...), without changing anything. What the GUI and terminal view show live.
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"

namespace gpupart::cli {

Command add_check_command(CLI::App& app) {
    struct CheckOptions {
        SnapshotOptions snapshot;
        bool json = false;
    };
    auto options = std::make_shared<CheckOptions>();
    CLI::App* check = app.add_subcommand("check", "Show the controller's findings about the current partitions");
    check->add_flag("--json", options->json, "Machine-readable output");
    add_snapshot_options(*check, options->snapshot);
    return {check, [options] {
                const Controller controller = make_controller(options->snapshot);
                const SystemState& state = controller.state();
                const std::vector<Finding> findings = check_result(state);
                if (options->json) {
                    fmt::print("{}\n", nlohmann::ordered_json{{"processes", state.processes.size()},
                                                              {"unreadable_slots", state.unreadable.size()},
                                                              {"mps_running", state.mps_running},
                                                              {"findings", findings_json(findings)}}
                                           .dump(2, ' ', false, kJsonUtf8Errors));
                    return 0;
                }
                fmt::print("{} partitioned process{}{} · MPS {}\n", state.processes.size(), state.processes.size() == 1 ? "" : "es",
                           state.unreadable.empty() ? "" : fmt::format(" and {} unreadable slot{}", state.unreadable.size(),
                                                                       state.unreadable.size() == 1 ? "" : "s"),
                           state.mps_running ? "running" : "not running");
                if (findings.empty()) fmt::print("no finding: nothing to warn about\n");
                for (const Finding& finding : findings) fmt::print("{}\n", finding_line(finding));
                return 0;
            }};
}

}  // namespace gpupart::cli
