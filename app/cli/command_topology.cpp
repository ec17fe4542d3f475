// gpupart topology: the floorplan of GPCs, TPCs, SMs and holes, engines and copy-engine wiring.
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/gpu_queries.hpp"
#include "report/topology_text.hpp"
#include "snapshot/snapshot_json.hpp"

namespace gpupart::cli {

nlohmann::ordered_json topology_json(const ChosenSnapshot& chosen, const Gpu& gpu) {
    return nlohmann::ordered_json{
        {"snapshot", chosen.origin},
        {"builtin", chosen.builtin},
        {"why", chosen.why},
        {"captured", chosen.snapshot.captured},
        {"summary",
         {{"tpcs", gpu.tpcs.size()},
          {"sms", sm_total(gpu)},
          {"gpcs", gpu.gpcs.size()},
          {"holes", gpu.holes.size()},
          {"undetermined_gpc_tpcs", undetermined_gpc_tpcs(gpu).to_list()},
          {"mask_width", gpu.mask_width}}},
        {"gpu", gpu_to_json(gpu)},
    };
}

Command add_topology_command(CLI::App& app) {
    struct Options {
        SnapshotOptions snapshot;
        bool json = false;
    };
    auto options = std::make_shared<Options>();
    CLI::App* command = app.add_subcommand("topology", "Show GPCs, TPCs, SMs, holes, engines and copy-engine wiring");
    add_snapshot_options(*command, options->snapshot);
    command->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    return {command, [options] {
                const ChosenSnapshot chosen = load_chosen(options->snapshot);
                const Gpu& gpu = select_gpu(chosen, options->snapshot.gpu);
                if (options->json) {
                    fmt::print("{}\n", topology_json(chosen, gpu).dump(2));
                } else {
                    print_origin(chosen);
                    fmt::print("{}", topology_text(gpu));
                }
                return 0;
            }};
}

}  // namespace gpupart::cli
