// gpupart mask parse EXPR: normalise a mask expression against a GPU's topology.
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/mask_resolve.hpp"
#include "report/mask_report.hpp"

namespace gpupart::cli {

Command add_mask_command(CLI::App& app) {
    struct MaskOptions {
        SnapshotOptions snapshot;
        std::string expression;
        bool json = false;
    };
    auto options = std::make_shared<MaskOptions>();
    CLI::App* mask = app.add_subcommand("mask", "Work with TPC mask expressions");
    mask->require_subcommand(1);
    CLI::App* parse = mask->add_subcommand(
        "parse", "Normalise a mask expression against a GPU (TPC k = SMs 2k and 2k+1): 0-31 | 33 | 0xff | gpc2 | gpc0-1,33 | all | 8 tpcs | 2 gpcs | 25% | bits:0x3c0f");
    parse->add_option("EXPR", options->expression, "The mask expression (quote it if it has spaces)")->required();
    add_snapshot_options(*parse, options->snapshot);
    parse->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    return {mask, [options] {
                const ChosenSnapshot chosen = partition_topology(options->snapshot);  // masks need mask bits
                const Gpu& gpu = selected_gpu(chosen, options->snapshot);
                const ResolvedMask resolved = resolve_mask(options->expression, gpu);
                if (options->json) {
                    nlohmann::ordered_json out{{"snapshot", chosen.origin}};
                    out.update(mask_report_json(options->expression, resolved, gpu));
                    fmt::print("{}\n", json_answer(out));
                } else {
                    print_origin(chosen);
                    fmt::print("{}", mask_report_text(options->expression, resolved, gpu));
                }
                return 0;
            }};
}

}  // namespace gpupart::cli
