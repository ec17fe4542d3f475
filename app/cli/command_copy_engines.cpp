// gpupart copy-engines: which physical copy engines (PCEs) each logical copy engine (LCE) drives, the
// graphics copy engines (GRCEs), and the PCEs two LCEs share (Bakita & Anderson, RTAS 2024, rule R8: their copies interfere).
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "report/engines_text.hpp"
#include "report/topology_text.hpp"
#include "snapshot/snapshot_json.hpp"

namespace gpupart::cli {
namespace {

using Json = nlohmann::ordered_json;

Json copy_engines_json(const ChosenSnapshot& chosen, const Gpu& gpu) {
    Json out = origin_json(chosen);
    out["gpu"] = gpu.index;
    const auto shared = shared_copy_engines(gpu);
    out["lces"] = Json::array();
    for (const LogicalCopyEngine& lce : gpu.copy_engines.lces) {
        Json item = lce_to_json(lce);
        item["pces"] = pce_list(lce.pce_mask);
        Json shares = Json::array();
        for (const auto& pair : shared) {
            if (pair.lce_a == lce.index) shares.push_back(pair.lce_b);
            if (pair.lce_b == lce.index) shares.push_back(pair.lce_a);
        }
        item["shares_pces_with"] = std::move(shares);
        out["lces"].push_back(std::move(item));
    }
    out["pce_count"] = fact_to_json(gpu.copy_engines.pce_count);
    out["shared"] = Json::array();
    for (const auto& pair : shared) out["shared"].push_back(Json{{"lces", {pair.lce_a, pair.lce_b}}, {"pces", pair.pce_list()}});
    return out;
}

}  // namespace

Command add_copy_engines_command(CLI::App& app) {
    struct CopyEnginesOptions {
        SnapshotOptions snapshot;
        bool json = false;
    };
    auto options = std::make_shared<CopyEnginesOptions>();
    CLI::App* command = app.add_subcommand("copy-engines", "Show the LCE -> PCE wiring and the PCEs LCEs share");
    add_snapshot_options(*command, options->snapshot);
    command->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    return {command, [options] {
                const ChosenSnapshot chosen = load_chosen(options->snapshot);
                const Gpu& gpu = selected_gpu(chosen, options->snapshot);
                if (options->json) {
                    fmt::print("{}\n", json_answer(copy_engines_json(chosen, gpu)));
                } else {
                    print_origin(chosen);
                    fmt::print("{}", copy_engines_text(gpu));
                }
                return 0;
            }};
}

}  // namespace gpupart::cli
