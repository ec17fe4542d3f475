// gpupart topology: the floorplan of GPCs, TPCs, SMs and holes, engines and copy-engine wiring;
// --sources says per fact where it came from. Leaves the GPC map of every GPU with a UUID for libgpupart.
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "gpc_maps.hpp"
#include "model/gpu_queries.hpp"
#include "report/sources_report.hpp"
#include "report/topology_text.hpp"
#include "snapshot/snapshot_json.hpp"
#include "sources/source_status_text.hpp"

namespace gpupart::cli {
namespace {

using Json = nlohmann::ordered_json;

Json sources_json(const ChosenSnapshot& chosen, const Gpu& gpu) {
    Json out = origin_json(chosen);
    out["gpu"] = gpu.index;
    out["sources"] = Json::array();
    for (const SourceStatus& status : sources_of(chosen, gpu.index)) out["sources"].push_back(source_status_to_json(status));
    out["facts"] = Json::array();
    for (const FactOrigin& row : fact_origins(gpu)) {
        Json from = Json::array();
        for (const auto& [provenance, count] : row.from) {
            Json item = provenance_to_json(provenance);
            item["items"] = count;
            from.push_back(std::move(item));
        }
        out["facts"].push_back(Json{{"fact", row.fact},
                                    {"value", row.value.empty() ? Json(nullptr) : Json(row.value)},
                                    {"unknown_reason", row.unknown_reason},
                                    {"from", std::move(from)}});
    }
    out["tpcs"] = Json::array();
    for (const TpcBitRow& row : tpc_bit_rows(gpu))
        out["tpcs"].push_back(Json{{"tpc", row.tpc ? Json(*row.tpc) : Json(nullptr)},
                                   {"descriptor_bit", row.descriptor_bit ? Json(*row.descriptor_bit) : Json(nullptr)},
                                   {"sms", row.sms},
                                   {"gpc", row.gpc ? Json(*row.gpc) : Json(nullptr)}});
    return out;
}

Json topology_json(const ChosenSnapshot& chosen, const Gpu& gpu) {
    Json out = origin_json(chosen);
    out["summary"] = Json{{"tpcs", gpu.tpcs.size()},
                          {"sms", sm_total(gpu)},
                          {"gpcs", gpu.gpcs.size()},
                          {"holes", gpu.holes.size()},
                          {"mask_bits_known", mask_bits_known(gpu)},
                          {"undetermined_gpc_tpcs", undetermined_gpc_tpcs(gpu).to_list()},
                          {"mask_width", gpu.mask_width}};
    out["sources"] = Json::array();
    for (const SourceStatus& status : sources_of(chosen, gpu.index)) out["sources"].push_back(source_status_to_json(status));
    out["gpu"] = gpu_to_json(gpu);
    return out;
}

}  // namespace

Command add_topology_command(CLI::App& app) {
    struct TopologyOptions {
        SnapshotOptions snapshot;
        bool json = false;
        bool sources = false;
        bool all_gpus = false;
    };
    auto options = std::make_shared<TopologyOptions>();
    CLI::App* command = app.add_subcommand("topology", "Show GPCs, TPCs, SMs, holes, engines and copy-engine wiring");
    add_snapshot_options(*command, options->snapshot);
    command->add_flag("--sources", options->sources, "Say per fact which source gave it, and what each source said");
    command->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    CLI::Option* all = command->add_flag("--all-gpus", options->all_gpus, "Every GPU of the snapshot, in index order");
    all->excludes(command->get_option("--gpu"));
    return {command, [options] {
                const ChosenSnapshot chosen = load_chosen(options->snapshot);
                // Programs partitioning themselves read the GPC maps of GPUs whose topology was read (gpc_maps.hpp).
                write_gpc_maps(chosen);
                if (options->all_gpus) {
                    // JSON: the one-GPU answer of each GPU, in a "gpus" array; text: each floorplan in turn.
                    if (options->json) {
                        Json out = origin_json(chosen);
                        out["gpus"] = Json::array();
                        for (const Gpu& each : chosen.snapshot.gpus) {
                            Json one = options->sources ? sources_json(chosen, each) : topology_json(chosen, each);
                            for (const char* key : {"snapshot", "live", "builtin", "why", "captured"}) one.erase(key);
                            out["gpus"].push_back(std::move(one));
                        }
                        fmt::print("{}\n", json_answer(out));
                        return 0;
                    }
                    print_origin(chosen);
                    for (std::size_t i = 0; i < chosen.snapshot.gpus.size(); ++i) {
                        const Gpu& each = chosen.snapshot.gpus[i];
                        if (i > 0) fmt::print("\n");
                        fmt::print("{}", options->sources ? sources_text(each, sources_of(chosen, each.index), chosen.live)
                                                          : topology_text(each));
                    }
                    return 0;
                }
                const Gpu& gpu = selected_gpu(chosen, options->snapshot);
                if (options->json) {
                    fmt::print("{}\n", json_answer((options->sources ? sources_json(chosen, gpu) : topology_json(chosen, gpu))));
                    return 0;
                }
                print_origin(chosen);
                if (options->sources) {
                    fmt::print("{}", sources_text(gpu, sources_of(chosen, gpu.index), chosen.live));
                    return 0;
                }
                fmt::print("{}", topology_text(gpu));
                const auto& sources = sources_of(chosen, gpu.index);
                if (!sources.empty()) fmt::print("\nSources (`gpupart topology --sources` says which fact came from which)\n");
                for (const SourceStatus& status : sources) fmt::print("  {}\n", source_status_line(status));
                return 0;
            }};
}

}  // namespace gpupart::cli
