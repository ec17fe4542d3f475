// gpupart: see how an NVIDIA GPU is built and shared. Subcommands live one per file; this file only
// wires them and turns every error into one line on stderr and an exit code of the documented contract
// (README, "Exit status"): 0 ok, 1 refused or failed, 2 usage, 3 internal error.
#include <exception>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "model/user_error.hpp"
#include "version_text.hpp"

int main(int argc, char** argv) {
    CLI::App app{"gpupart: see how an NVIDIA GPU is built and shared, and partition its TPCs between processes"};
    // A callback, not a fixed string: the driver branch is read when --version is asked for, never otherwise.
    app.set_version_flag("--version", [] { return gpupart::cli::version_text(); });
    app.require_subcommand(1);
    const std::vector<gpupart::cli::Command> commands = {
        gpupart::cli::add_topology_command(app),
        gpupart::cli::add_gpus_command(app),
        gpupart::cli::add_engines_command(app),
        gpupart::cli::add_copy_engines_command(app),
        gpupart::cli::add_mask_command(app),
        gpupart::cli::add_export_command(app),
        gpupart::cli::add_run_command(app),
        gpupart::cli::add_set_command(app),
        gpupart::cli::add_list_command(app),
        gpupart::cli::add_smlp_command(app),
        gpupart::cli::add_mps_command(app),
        gpupart::cli::add_history_command(app),
        gpupart::cli::add_undo_command(app),
        gpupart::cli::add_profile_command(app),
        gpupart::cli::add_check_command(app),
        gpupart::cli::add_demo_command(app),
        gpupart::cli::add_top_command(app),
        gpupart::cli::add_probe_command(app),
        gpupart::cli::add_source_command(app),
        gpupart::cli::add_exporter_command(app),
        gpupart::cli::add_measure_command(app),
        gpupart::cli::add_plan_command(app),
        gpupart::cli::add_k8s_command(app),
        gpupart::cli::add_gpcs_command(app),
        gpupart::cli::add_slurm_command(app),
    };
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        // --help and --version arrive here too (CLI11 prints them, exit 0). Every other parse error is a
        // usage error: exit 2, not CLI11's own codes (100 and up), in one line like every other error.
        if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(error);
        fmt::print(stderr, "gpupart: usage: {} (see gpupart --help)\n", gpupart::one_line(error.what()));
        return gpupart::cli::kExitUsage;
    }
    try {
        for (const auto& command : commands)
            if (command.app->parsed()) return command.run();
    } catch (const gpupart::UserError& error) {
        // Messages quote file names and slot contents that anyone may have written.
        fmt::print(stderr, "gpupart: {}\n", gpupart::one_line(error.what()));
        return gpupart::cli::kExitRefused;
    } catch (const std::exception& error) {
        fmt::print(stderr, "gpupart: internal error: {}\n", gpupart::one_line(error.what()));
        return gpupart::cli::kExitInternal;
    }
    return gpupart::cli::kExitOk;
}
