// gpupart: see how an NVIDIA GPU is built and shared. Subcommands live one per file; this file only
// wires them and turns every error into one line on stderr and a non-zero exit.
#include <exception>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "model/user_error.hpp"

int main(int argc, char** argv) {
    CLI::App app{"gpupart: see how an NVIDIA GPU is built and shared, and partition its TPCs between processes"};
    app.set_version_flag("--version", std::string("gpupart ") + GPUPART_VERSION);
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
        gpupart::cli::add_mps_command(app),
        gpupart::cli::add_history_command(app),
        gpupart::cli::add_undo_command(app),
        gpupart::cli::add_profile_command(app),
        gpupart::cli::add_check_command(app),
        gpupart::cli::add_demo_command(app),
        gpupart::cli::add_top_command(app),
        gpupart::cli::add_probe_command(app),
        gpupart::cli::add_source_command(app),
    };
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return app.exit(error);
    }
    try {
        for (const auto& command : commands)
            if (command.app->parsed()) return command.run();
    } catch (const gpupart::UserError& error) {
        // Messages quote file names and slot contents that anyone may have written.
        fmt::print(stderr, "gpupart: {}\n", gpupart::one_line(error.what()));
        return 1;
    } catch (const std::exception& error) {
        fmt::print(stderr, "gpupart: internal error: {}\n", gpupart::one_line(error.what()));
        return 3;
    }
    return 0;
}
