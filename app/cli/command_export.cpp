// gpupart export --json FILE: the whole snapshot as versioned JSON (docs/snapshot-format.md).
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart::cli {

Command add_export_command(CLI::App& app) {
    struct Options {
        SnapshotOptions snapshot;
        std::string json_path;
    };
    auto options = std::make_shared<Options>();
    CLI::App* command = app.add_subcommand("export", "Write the whole snapshot to a file");
    command->add_option("--json", options->json_path, "Write the snapshot as JSON to FILE ('-' for stdout)")->required();
    command->add_option("--snapshot", options->snapshot.snapshot,
                        "Snapshot to export: a JSON file or builtin:NAME (default: as for topology)");
    return {command, [options] {
                const ChosenSnapshot chosen = load_chosen(options->snapshot);
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
