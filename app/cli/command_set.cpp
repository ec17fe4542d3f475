// gpupart set PID EXPR: changes the TPCs of a running partitioned process, from its next kernel launch,
// through the controller (findings, refusal, journal).
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/pid.hpp"
#include "plan_output.hpp"

namespace gpupart::cli {

Command add_set_command(CLI::App& app) {
    struct SetOptions {
        SnapshotOptions snapshot;
        std::string pid;  // read by parse_pid, not CLI11: it takes " 123", "+123" and "0x4a02"
        std::string tpcs;
        bool spread = false;
        bool dry_run = false;
        bool json = false;
    };
    auto options = std::make_shared<SetOptions>();
    CLI::App* set = app.add_subcommand("set", "Change the TPCs of a running partitioned process");
    set->add_option("PID", options->pid, "Process id (see `gpupart list`)")->required();
    set->add_option("EXPR", options->tpcs, "TPCs it may use from its next launch (TPC k = SMs 2k and 2k+1): 0-31 | 33 | gpc2 | 8 tpcs | 25% | all")->required();
    set->add_flag("--spread", options->spread, "Place a count over as many GPCs as possible (default: GPC-packed)");
    set->add_flag("--dry-run", options->dry_run, "Show the placement and findings; change nothing");
    set->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    add_snapshot_options(*set, options->snapshot);
    return {set, [options] {
                const int pid = parse_pid(options->pid);
                Controller controller = make_controller_for_process(options->snapshot, pid);
                const Plan plan = controller.plan_set({{pid, options->tpcs, options->spread ? Placement::spread : Placement::packed}},
                                                      fmt::format("set {} {}", pid, options->tpcs));
                return plan_and_apply(controller, plan, options->json, options->dry_run);
            }};
}

}  // namespace gpupart::cli
