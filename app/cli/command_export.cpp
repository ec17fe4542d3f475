// gpupart export: the whole snapshot as versioned JSON (docs/snapshot-format.md), and the floorplan as
// PNG or SVG drawn by the GUI's own painter (headless).
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "controller/system_state.hpp"
#include "commands.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "render_export.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart::cli {
namespace {

// The partitioned processes as the registry has them now, as the GPU's process list (source: registry).
void add_registry_processes(ChosenSnapshot& chosen, int gpu_index) {
    select_gpu(chosen, gpu_index);  // a bad index is refused before anything is read
    Gpu& gpu = chosen.snapshot.gpus[static_cast<std::size_t>(gpu_index)];
    const SystemState state = gather_state(Registry(Registry::default_directory(), gpu), gpu);
    gpu.processes.clear();
    for (const ProcessState& process : state.processes)
        gpu.processes.push_back(Process{
            process.pid, process.start_time, static_cast<int>(process.uid), process.command,
            process.partitioned ? std::optional<TpcMask>(process.mask) : std::nullopt,
            unknown_fact<std::uint64_t>("not read by gpupart export", {Source::registry, ""}),
            {Source::registry, Registry::default_directory()}});
}

}  // namespace

Command add_export_command(CLI::App& app) {
    struct ExportOptions {
        SnapshotOptions snapshot;
        std::string json_path;
        std::string png_path;
        std::string svg_path;
        bool processes = false;
    };
    auto options = std::make_shared<ExportOptions>();
    CLI::App* command = app.add_subcommand("export", "Write the snapshot as JSON, or the floorplan as PNG/SVG");
    command->add_option("--json", options->json_path, "Write the snapshot as JSON to FILE ('-' for stdout)");
    command->add_option("--png", options->png_path, "Draw the floorplan (owners coloured) as a PNG image to FILE");
    command->add_option("--svg", options->svg_path, "Draw the floorplan (owners coloured) as an SVG image to FILE");
    command->add_flag("--processes", options->processes,
                      "Include the registry's partitioned processes (pid, command, TPCs) in the GPU, so the JSON "
                      "records who owns what and the PNG/SVG colour the owners");
    add_snapshot_options(*command, options->snapshot);
    return {command, [options] {
                if (options->json_path.empty() && options->png_path.empty() && options->svg_path.empty())
                    throw UserError("export: say what to write: --json FILE, --png FILE and/or --svg FILE");
                ChosenSnapshot chosen = load_chosen(options->snapshot);
                const int gpu_index = selected_index(chosen, options->snapshot);
                if (options->processes) add_registry_processes(chosen, gpu_index);
                if (!options->png_path.empty() || !options->svg_path.empty()) {
                    const Gpu& gpu = select_gpu(chosen, gpu_index);
                    const std::string title = fmt::format("{} ({})", gpu_display_name(gpu), chosen.origin);
                    render_export(chosen.snapshot, gpu_index, title, options->png_path, options->svg_path);
                    for (const std::string& path : {options->png_path, options->svg_path})
                        if (!path.empty())
                            fmt::print(stderr, "gpupart: wrote {} (floorplan of {}, {})\n", path, gpu_display_name(gpu), chosen.origin);
                }
                if (options->json_path.empty()) return 0;
                if (options->json_path == "-") {
                    fmt::print("{}", snapshot_text(chosen.snapshot));
                    return 0;
                }
                save_snapshot(chosen.snapshot, options->json_path);
                fmt::print(stderr, "gpupart: wrote {} ({}, {} GPU{})\n", options->json_path, chosen.origin,
                           chosen.snapshot.gpus.size(), chosen.snapshot.gpus.size() == 1 ? "" : "s");
                return 0;
            }};
}

}  // namespace gpupart::cli
