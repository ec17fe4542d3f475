// gpupart export: the whole snapshot as versioned JSON (docs/snapshot-format.md), and the floorplan as
// PNG or SVG drawn by the GUI's own painter (headless).
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "render_export.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart::cli {

Command add_export_command(CLI::App& app) {
    struct Options {
        SnapshotOptions snapshot;
        std::string json_path;
        std::string png_path;
        std::string svg_path;
    };
    auto options = std::make_shared<Options>();
    CLI::App* command = app.add_subcommand("export", "Write the snapshot as JSON, or the floorplan as PNG/SVG");
    command->add_option("--json", options->json_path, "Write the snapshot as JSON to FILE ('-' for stdout)");
    command->add_option("--png", options->png_path, "Draw the floorplan (owners coloured) as a PNG image to FILE");
    command->add_option("--svg", options->svg_path, "Draw the floorplan (owners coloured) as an SVG image to FILE");
    add_snapshot_options(*command, options->snapshot);
    return {command, [options] {
                if (options->json_path.empty() && options->png_path.empty() && options->svg_path.empty())
                    throw UserError("export: say what to write: --json FILE, --png FILE and/or --svg FILE");
                const ChosenSnapshot chosen = load_chosen(options->snapshot);
                if (!options->png_path.empty() || !options->svg_path.empty()) {
                    const Gpu& gpu = select_gpu(chosen, options->snapshot.gpu);
                    const std::string title = fmt::format("{} ({})", gpu_display_name(gpu), chosen.origin);
                    render_export(chosen.snapshot, options->snapshot.gpu, title, options->png_path, options->svg_path);
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
