// gpupart engines: engines by runlist, channel groups in use, allocated channels (root).
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "report/engines_text.hpp"
#include "snapshot/snapshot_json.hpp"

namespace gpupart::cli {

Command add_engines_command(CLI::App& app) {
    struct EnginesOptions {
        SnapshotOptions snapshot;
        bool json = false;
    };
    auto options = std::make_shared<EnginesOptions>();
    CLI::App* command = app.add_subcommand("engines", "Show the engines, their runlists and the channel groups on them");
    add_snapshot_options(*command, options->snapshot);
    command->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    return {command, [options] {
                const ChosenSnapshot chosen = load_chosen(options->snapshot);
                const Gpu& gpu = selected_gpu(chosen, options->snapshot);
                if (!options->json) {
                    print_origin(chosen);
                    fmt::print("{}", engines_text(gpu));
                    return 0;
                }
                nlohmann::ordered_json out = origin_json(chosen);
                out["gpu"] = gpu.index;
                out["engines"] = nlohmann::ordered_json::array();
                for (const Engine& engine : gpu.engines) out["engines"].push_back(engine_to_json(engine));
                out["runlists"] = nlohmann::ordered_json::array();
                for (const Runlist& runlist : gpu.runlists) out["runlists"].push_back(runlist_to_json(runlist));
                out["fifo"] = fifo_to_json(gpu.fifo);
                fmt::print("{}\n", json_answer(out));
                return 0;
            }};
}

}  // namespace gpupart::cli
