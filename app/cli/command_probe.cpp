// gpupart probe [--gpu N] [--json] [--deadline S]: measures which launch-descriptor mask bits of GPU N
// are TPCs and which SMs each drives (gpupart-probe under the shim, in a child with a deadline), and
// caches the result per GPU UUID and driver version for the live topology. Always measures anew.
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/user_error.hpp"
#include "sources/probe_analysis.hpp"
#include "sources/probe_cache.hpp"
#include "sources/probe_runner.hpp"

namespace gpupart::cli {
namespace {

struct Options {
    int gpu = 0;
    bool json = false;
    int deadline_s = 20;
};

nlohmann::ordered_json probe_json(const ProbeRun& run, const ProbeMap& map, const std::string& cache) {
    const ProbeReport& r = *run.report;
    nlohmann::ordered_json tpcs = nlohmann::ordered_json::array();
    for (const ProbeBit& bit : map.tpcs) tpcs.push_back({{"bit", bit.mask_bit}, {"sms", bit.sms}});
    TpcMask holes;
    for (int bit : map.holes) holes.set(bit);
    return {{"gpu",
             {{"index", r.device.index},
              {"name", r.device.name},
              {"uuid", r.device.uuid},
              {"pci_bus_id", r.device.pci_bus_id},
              {"compute_capability", r.device.compute_capability},
              {"sm_count", r.device.sm_count},
              {"driver_version", r.device.driver_version},
              {"cuda_driver_version", r.device.cuda_driver_version}}},
            {"descriptor_version", fmt::format("{:#x}", r.descriptor_version)},
            {"mask_width", r.mask_width},
            {"anchor_bit", r.anchor_bit},
            {"real_tpcs", map.real_tpcs().to_hex()},
            {"tpc_count", map.tpcs.size()},
            {"holes", holes.to_list()},
            {"tpcs", tpcs},
            {"launches", r.launches},
            {"probe_ms", r.elapsed_ms},
            {"wall_ms", run.wall_ms},
            {"cache", cache}};
}

void print_text(const ProbeRun& run, const ProbeMap& map, const std::string& cache) {
    const ProbeReport& r = *run.report;
    TpcMask holes;
    for (int bit : map.holes) holes.set(bit);
    fmt::print("probe: GPU {} {} ({}, PCI {}), driver {}, descriptor {:#x} ({} mask bits)\n", r.device.index, r.device.name,
               r.device.uuid, r.device.pci_bus_id, r.device.driver_version, r.descriptor_version, r.mask_width);
    fmt::print("{} mask bits are TPCs, {} are holes; {} SMs. {} launches in {:.0f} ms ({:.0f} ms with process start)\n",
               map.tpcs.size(), map.holes.size(), r.device.sm_count, r.launches, r.elapsed_ms, run.wall_ms);
    fmt::print("cached: {}\n\n{:<5} {}\n", cache, "bit", "sms");
    for (const ProbeBit& bit : map.tpcs) fmt::print("{:<5} {}\n", bit.mask_bit, fmt::join(bit.sms, " "));
    fmt::print("\nholes: {}\n", holes.to_list());
}

int run_probe_command(const Options& options) {
    const ProbeRun run = run_probe(ProbeCommand{find_probe_program(), find_shim(), options.gpu, options.deadline_s * 1000});
    if (run.status.state != SourceState::ok) throw UserError(fmt::format("probe: {}", run.status.detail));
    const ProbeMap map = analyse_probe(*run.report);
    if (!map.consistent())
        throw UserError(fmt::format("probe of GPU {} is inconsistent, not cached: {} ({} problem(s))", options.gpu,
                                    map.problems.front(), map.problems.size()));
    const std::string cache = store_probe(*run.report);
    if (options.json)
        fmt::print("{}\n", probe_json(run, map, cache).dump(2));
    else
        print_text(run, map, cache);
    return 0;
}

}  // namespace

Command add_probe_command(CLI::App& app) {
    auto options = std::make_shared<Options>();
    CLI::App* probe = app.add_subcommand(
        "probe", "Measure which TPC mask bits of a GPU are real TPCs and which SMs each drives (needs the GPU, not MPS)");
    probe->add_option("--gpu", options->gpu, "GPU index in PCI bus order (as nvidia-smi numbers them)")
        ->check(CLI::NonNegativeNumber);
    probe->add_flag("--json", options->json, "Machine-readable output");
    probe->add_option("--deadline", options->deadline_s, "Seconds after which the probe process is killed")
        ->check(CLI::Range(1, 600));
    return {probe, [options] { return run_probe_command(*options); }};
}

}  // namespace gpupart::cli
