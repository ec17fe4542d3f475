// gpupart gpus: the GPUs of the snapshot shown (this machine's, read live, or a recording), each with
// what every source said about it.
#include <memory>
#include <type_traits>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "csv_output.hpp"
#include "model/gpu_queries.hpp"
#include "report/fact_text.hpp"
#include "report/topology_text.hpp"
#include "snapshot/snapshot_json.hpp"
#include "sources/source_status_text.hpp"

namespace gpupart::cli {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
Json value_or_null(const Fact<T>& fact) {
    return fact.known() ? Json(*fact.value) : Json(nullptr);
}

Json gpus_json(const ChosenSnapshot& chosen) {
    Json out = origin_json(chosen);
    out["gpus"] = Json::array();
    for (const Gpu& gpu : chosen.snapshot.gpus) {
        Json sources = Json::array();
        for (const SourceStatus& status : sources_of(chosen, gpu.index)) sources.push_back(source_status_to_json(status));
        out["gpus"].push_back(Json{{"index", gpu.index},
                                   {"name", value_or_null(gpu.name)},
                                   {"pci_bus_id", value_or_null(gpu.pci_bus_id)},
                                   {"uuid", value_or_null(gpu.uuid)},
                                   {"architecture", value_or_null(gpu.architecture)},
                                   {"compute_capability", value_or_null(gpu.compute_capability)},
                                   {"driver_version", value_or_null(gpu.driver_version)},
                                   {"mig_enabled", value_or_null(gpu.mig_enabled)},
                                   {"gpcs", gpu.gpcs.size()},
                                   {"tpcs", gpu.tpcs.size()},
                                   {"sms", sm_total(gpu)},
                                   {"mask_bits_known", mask_bits_known(gpu)},
                                   {"sources", std::move(sources)}});
    }
    return out;
}

std::string gpus_text(const ChosenSnapshot& chosen) {
    std::string out;
    for (const Gpu& gpu : chosen.snapshot.gpus) {
        out += fmt::format("GPU {}  {}  {}\n", gpu.index, fact_text(gpu.pci_bus_id), gpu_display_name(gpu));
        std::string what;
        if (gpu.architecture.known()) what += *gpu.architecture.value + " ";
        if (gpu.compute_capability.known()) what += "sm " + *gpu.compute_capability.value + " · ";
        if (gpu.driver_version.known()) what += "driver " + *gpu.driver_version.value + " · ";
        if (gpu.mig_enabled.known()) what += std::string("MIG ") + (*gpu.mig_enabled.value ? "on" : "off") + " · ";
        out += fmt::format("  {}{}\n", what, topology_summary(gpu));
        const auto& sources = sources_of(chosen, gpu.index);
        if (sources.empty()) out += fmt::format("  sources: none read live ({} is a recording)\n", chosen.origin);
        for (const SourceStatus& status : sources) out += "  " + source_status_line(status) + "\n";
    }
    if (chosen.snapshot.gpus.empty()) out += "no GPU in this snapshot\n";
    return out;
}

template <typename T>
std::string csv_text(const Fact<T>& fact) {
    if (!fact.known()) return "";  // unknown: an empty field, as null in --json
    if constexpr (std::is_same_v<T, bool>) return *fact.value ? "yes" : "no";
    else return fmt::format("{}", *fact.value);
}

const std::vector<CsvColumn<Gpu>>& gpu_columns() {
    using G = const Gpu&;
    static const std::vector<CsvColumn<Gpu>> columns = {
        {"index", [](G g) { return std::to_string(g.index); }},
        {"name", [](G g) { return csv_text(g.name); }},
        {"pci_bus_id", [](G g) { return csv_text(g.pci_bus_id); }},
        {"uuid", [](G g) { return csv_text(g.uuid); }},
        {"architecture", [](G g) { return csv_text(g.architecture); }},
        {"compute_capability", [](G g) { return csv_text(g.compute_capability); }},
        {"driver_version", [](G g) { return csv_text(g.driver_version); }},
        {"mig_enabled", [](G g) { return csv_text(g.mig_enabled); }},
        {"gpcs", [](G g) { return std::to_string(g.gpcs.size()); }},
        {"tpcs", [](G g) { return std::to_string(g.tpcs.size()); }},
        {"sms", [](G g) { return std::to_string(sm_total(g)); }},
        {"mask_bits_known", [](G g) { return std::string(mask_bits_known(g) ? "yes" : "no"); }},
    };
    return columns;
}

constexpr const char* kGpusDefaultFields = "index,name,pci_bus_id,uuid,driver_version,tpcs,sms";

}  // namespace

Command add_gpus_command(CLI::App& app) {
    struct GpusOptions {
        SnapshotOptions snapshot;
        bool json = false;
        CsvOptions csv;
    };
    auto options = std::make_shared<GpusOptions>();
    CLI::App* command = app.add_subcommand("gpus", "List the GPUs, with what each topology source said about them");
    command->add_option("--snapshot", options->snapshot.snapshot,
                        "Snapshot to list: a JSON file or builtin:NAME (default: this machine's GPUs where present)");
    CLI::Option* json = command->add_flag("--json", options->json, "Machine-readable output (docs/json-output.md)");
    add_csv_options(*command, options->csv, csv_names(gpu_columns()), kGpusDefaultFields, json);
    return {command, [options] {
                const ChosenSnapshot chosen = load_chosen(options->snapshot);
                if (options->csv.wanted()) {
                    print_csv(options->csv, gpu_columns(), kGpusDefaultFields, chosen.snapshot.gpus);
                } else if (options->json) {
                    fmt::print("{}\n", json_answer(gpus_json(chosen)));
                } else {
                    print_origin(chosen);
                    fmt::print("{}", gpus_text(chosen));
                }
                return 0;
            }};
}

}  // namespace gpupart::cli
