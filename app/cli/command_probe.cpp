// gpupart probe [--gpu N] [--json] [--deadline S]: measures which launch-descriptor mask bits of GPU N
// are TPCs and which SMs each drives (gpupart-probe under the shim, in a child with a deadline), and
// caches the result per GPU UUID and driver version for the live topology. Always measures anew.
#include <memory>
#include <optional>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/tpc_numbering.hpp"
#include "model/user_error.hpp"
#include "sources/probe_analysis.hpp"
#include "sources/probe_cache.hpp"
#include "sources/mmio_image.hpp"
#include "sources/probe_runner.hpp"
#include "sources/rm_device_transport.hpp"
#include "sources/rm_reader.hpp"
#include "sources/source_status_text.hpp"

namespace gpupart::cli {
namespace {

struct ProbeOptions {
    int gpu = 0;
    bool json = false;
    int deadline_s = 20;
};

// The probe joined with the driver's global SM order from the RM controls (no privilege needed): each
// mask bit's logical GPC and TPC. Empty `join` with the reason when the RM reader could not give the order.
struct SmOrderJoin {
    SourceStatus rm;
    std::optional<ProbeJoin> join;
    std::string unknown;
};

SmOrderJoin join_with_rm(const ProbeReport& report, const ProbeMap& map) {
    SmOrderJoin out;
    RmDeviceTransport transport(machine_roots().dev);
    const RmReadResult rm = read_rm_facts(transport, sysfs_bus_id(report.device.pci_bus_id), ::geteuid() == 0);
    out.rm = rm.status;
    if (!rm.facts) out.unknown = source_status_line(rm.status);
    else if (!rm.facts->sm_order.ok()) out.unknown = rm.facts->sm_order.why_not;
    else out.join = join_with_sm_order(map, rm.facts->sm_order.value->entries);
    return out;
}

nlohmann::ordered_json join_json(const SmOrderJoin& joined) {
    if (!joined.join) return {{"rm", source_status_to_json(joined.rm)}, {"unknown", joined.unknown}};
    nlohmann::ordered_json bits = nlohmann::ordered_json::array();
    for (const BitPlacement& placed : joined.join->bits)
        bits.push_back({{"bit", placed.mask_bit},
                        {"gpc", placed.logical_gpc ? nlohmann::ordered_json(*placed.logical_gpc) : nullptr},
                        {"tpc", placed.local_tpc ? nlohmann::ordered_json(*placed.local_tpc) : nullptr},
                        {"global_tpc", placed.global_tpc ? nlohmann::ordered_json(*placed.global_tpc) : nullptr}});
    nlohmann::ordered_json gpcs = nlohmann::ordered_json::object();
    for (const auto& [gpc, gpc_bits] : joined.join->bits_by_gpc()) gpcs[std::to_string(gpc)] = gpc_bits;
    return {{"rm", source_status_to_json(joined.rm)},
            {"agrees", joined.join->agrees()},
            {"conflicts", joined.join->conflicts},
            {"bits_by_logical_gpc", gpcs},
            {"bits", bits}};
}

// The driver's per-stream mask: verified here (where), not verified (why), or not checked (an older report).
nlohmann::ordered_json stream_mask_json(const ProbeReport& r) {
    if (r.stream_mask_note.empty()) return nullptr;
    return {{"verified", r.stream_mask_offset >= 0},
            {"offset", r.stream_mask_offset >= 0 ? nlohmann::ordered_json(fmt::format("{:#x}", r.stream_mask_offset))
                                                 : nlohmann::ordered_json(nullptr)},
            {"why", one_line(r.stream_mask_note, 300)}};
}

std::string stream_mask_text(const ProbeReport& r) {
    if (r.stream_mask_note.empty()) return "not checked (a probe of an older gpupart: run `gpupart probe` again)";
    if (r.stream_mask_offset >= 0)
        return fmt::format("verified at offset {:#x}: {}", r.stream_mask_offset, one_line(r.stream_mask_note, 300));
    return fmt::format("not verified: {}", one_line(r.stream_mask_note, 300));
}

nlohmann::ordered_json probe_json(const ProbeRun& run, const ProbeMap& map, const std::string& cache) {
    const ProbeReport& r = *run.report;
    nlohmann::ordered_json tpcs = nlohmann::ordered_json::array();
    for (const ProbeBit& bit : map.tpcs) {
        const std::optional<int> number = tpc_number(Tpc{bit.mask_bit, {}, {}, bit.sms, {}, {}, {}});
        tpcs.push_back({{"bit", bit.mask_bit}, {"tpc", number ? nlohmann::ordered_json(*number) : nullptr}, {"sms", bit.sms}});
    }
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
            {"stream_mask", stream_mask_json(r)},
            {"launches", r.launches},
            {"probe_ms", r.elapsed_ms},
            {"wall_ms", run.wall_ms},
            {"cache", cache}};
}

void print_join(const SmOrderJoin& joined) {
    if (!joined.join) {
        fmt::print("\nSM order: not joined: {}\n", joined.unknown);
        return;
    }
    const ProbeJoin& join = *joined.join;
    if (join.agrees())
        fmt::print("\njoined with the RM SM order: every bit's SMs are one TPC of the driver's order, every TPC has one bit\n");
    else
        fmt::print("\njoined with the RM SM order: {} conflict(s)\n", join.conflicts.size());
    for (const std::string& conflict : join.conflicts) fmt::print("  conflict: {}\n", conflict);
    for (const auto& [gpc, bits] : join.bits_by_gpc()) fmt::print("  logical gpc {}: bits {}\n", gpc, fmt::join(bits, " "));
}

void print_text(const ProbeRun& run, const ProbeMap& map, const std::string& cache) {
    const ProbeReport& r = *run.report;
    TpcMask holes;
    for (int bit : map.holes) holes.set(bit);
    fmt::print("probe: GPU {} {} ({}, PCI {}), driver {}, descriptor {:#x} ({} mask bits)\n", r.device.index, r.device.name,
               r.device.uuid, r.device.pci_bus_id, r.device.driver_version, r.descriptor_version, r.mask_width);
    fmt::print("{} mask bits are TPCs, {} are holes; {} SMs. {} launches in {:.0f} ms ({:.0f} ms with process start)\n",
               map.tpcs.size(), map.holes.size(), r.device.sm_count, r.launches, r.elapsed_ms, run.wall_ms);
    // Each descriptor bit with the TPC number the driver gives its SMs (TPC k = SMs 2k and 2k+1): masks name numbers.
    fmt::print("stream mask: {}\n", stream_mask_text(r));
    fmt::print("cached: {}\n\n{:<5} {:<5} {}\n", cache, "bit", "tpc", "sms");
    for (const ProbeBit& bit : map.tpcs) {
        const std::optional<int> number = tpc_number(Tpc{bit.mask_bit, {}, {}, bit.sms, {}, {}, {}});
        fmt::print("{:<5} {:<5} {}\n", bit.mask_bit, number ? fmt::format("{}", *number) : std::string("?"), fmt::join(bit.sms, " "));
    }
    fmt::print("\nholes: {}\n", holes.to_list());
}

int run_probe_command(const ProbeOptions& options) {
    const ProbeRun run = run_probe(ProbeCommand{find_probe_program(), find_shim(), options.gpu, options.deadline_s * 1000});
    if (run.status.state != SourceState::ok) throw UserError(fmt::format("probe: {}", run.status.detail));
    const ProbeMap map = analyse_probe(*run.report);
    if (!map.consistent())
        throw UserError(fmt::format("probe of GPU {} is inconsistent, not cached: {} ({} problem(s))", options.gpu,
                                    map.problems.front(), map.problems.size()));
    const std::string cache = store_probe(*run.report);
    const SmOrderJoin joined = join_with_rm(*run.report, map);
    if (options.json) {
        nlohmann::ordered_json json = probe_json(run, map, cache);
        json["sm_order_join"] = join_json(joined);
        fmt::print("{}\n", json_answer(json));
    } else {
        print_text(run, map, cache);
        print_join(joined);
    }
    return 0;
}

}  // namespace

Command add_probe_command(CLI::App& app) {
    auto options = std::make_shared<ProbeOptions>();
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
