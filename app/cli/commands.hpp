#pragma once
// One function per subcommand: each adds its subcommand and options to the app and returns the
// action to run when that subcommand was given.
#include <functional>

#include <CLI/CLI.hpp>

namespace gpupart::cli {

struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;  // returns the exit code; throws UserError for bad input
};

Command add_topology_command(CLI::App& app);
Command add_gpus_command(CLI::App& app);
Command add_engines_command(CLI::App& app);
Command add_copy_engines_command(CLI::App& app);
Command add_mask_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_set_command(CLI::App& app);
Command add_list_command(CLI::App& app);
Command add_mps_command(CLI::App& app);
Command add_history_command(CLI::App& app);
Command add_undo_command(CLI::App& app);
Command add_profile_command(CLI::App& app);
Command add_check_command(CLI::App& app);
Command add_demo_command(CLI::App& app);
Command add_top_command(CLI::App& app);
Command add_probe_command(CLI::App& app);
Command add_source_command(CLI::App& app);
Command add_exporter_command(CLI::App& app);
Command add_measure_command(CLI::App& app);
Command add_plan_command(CLI::App& app);
Command add_k8s_command(CLI::App& app);
Command add_gpcs_command(CLI::App& app);
Command add_smlp_command(CLI::App& app);
Command add_slurm_command(CLI::App& app);

}  // namespace gpupart::cli
