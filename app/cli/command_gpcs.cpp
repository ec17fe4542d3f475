// gpupart gpcs [--gpu G] [--write] [--json]: a GPU's TPCs per GPC as libsmctrl_get_gpc_info returns them
// to programs that partition themselves (libgpupart.so), and, with --write, the map file they read.
#include <memory>

#include <unistd.h>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "model/user_error.hpp"
#include "registry/gpc_map.hpp"
#include "registry/registry.hpp"

namespace gpupart::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string write_map(const ChosenSnapshot& chosen, const Gpu& gpu) {
    const gpupart_gpcs_file map = gpc_map_of(gpu, chosen.live ? "live" : "snapshot file");  // throws the reason
    const auto directory = user_directory(Registry::default_directory(), ::getuid(), true);
    if (!directory) throw UserError("no registry directory for this user");
    return write_gpc_map(*directory, map);
}

}  // namespace

Command add_gpcs_command(CLI::App& app) {
    struct GpcsOptions {
        SnapshotOptions snapshot;
        bool write = false;
        bool json = false;
    };
    auto options = std::make_shared<GpcsOptions>();
    CLI::App* command = app.add_subcommand(
        "gpcs", "Show a GPU's TPCs per GPC as libgpupart's libsmctrl_get_gpc_info gives them; --write leaves the map it reads");
    add_snapshot_options(*command, options->snapshot);
    command->add_flag("--write", options->write, "Write the GPC map file into your registry directory (needs the GPU's UUID)");
    command->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    return {command, [options] {
                const ChosenSnapshot chosen = load_chosen(options->snapshot);
                const Gpu& gpu = selected_gpu(chosen, options->snapshot);
                if (!mask_bits_known(gpu)) throw UserError(fmt::format("GPU {}: {}", gpu.index, mask_bits_unknown_reason(gpu)));
                const std::string path = options->write ? write_map(chosen, gpu) : "";
                const std::string uuid = gpu.uuid.value.value_or("");
                const TpcNumbering numbering = TpcNumbering::of(gpu);  // the map file holds descriptor bits too
                if (options->json) {
                    Json out = origin_json(chosen);
                    out["gpu"] = gpu.index;
                    out["uuid"] = uuid.empty() ? Json(nullptr) : Json(uuid);
                    out["tpcs"] = real_tpcs(gpu).count();
                    out["gpcs"] = Json::array();
                    for (const Gpc& gpc : gpu.gpcs) {
                        const TpcMask tpcs = gpc_tpcs(gpu, gpc.index);
                        if (!tpcs.empty())
                            out["gpcs"].push_back(Json{{"gpc", gpc.index}, {"tpcs", tpcs.to_list()}, {"mask", tpcs.to_hex()},
                                                         {"descriptor_bits", "bits:" + numbering.to_bits(tpcs).to_hex()}});
                    }
                    out["written"] = path.empty() ? Json(nullptr) : Json(path);
                    out["unavailable_reason"] = gpc_map_unavailable_reason(gpu);
                    fmt::print("{}\n", json_answer(out));
                    return 0;
                }
                print_origin(chosen);
                fmt::print("GPU {} ({}{}): {} TPCs; libsmctrl_get_gpc_info lists the GPCs that have TPCs, in this order\n",
                           gpu.index, gpu_display_name(gpu), uuid.empty() ? "" : ", " + uuid, real_tpcs(gpu).count());
                int listed = 0;
                for (const Gpc& gpc : gpu.gpcs) {
                    const TpcMask tpcs = gpc_tpcs(gpu, gpc.index);
                    if (tpcs.empty()) continue;
                    fmt::print("  [{}] {:<5} TPCs {:<34} bits:{}\n", listed++, gpc_name(gpc.index), tpcs.to_list(),
                               numbering.to_bits(tpcs).to_hex());
                }
                if (!path.empty()) fmt::print("wrote {}\n", path);
                else if (const std::string reason = gpc_map_unavailable_reason(gpu); !reason.empty())
                    fmt::print("no map file can be written: {}\n", reason);
                return 0;
            }};
}

}  // namespace gpupart::cli
