// gpupart source nvml|mps|udev|nvdebug|mmio [--json]: what one topology source says on its own, raw,
// with its status line, for checking a source and for bug reports. `gpupart gpus` and `topology
// --sources` show the sources together; this shows one in full.
//   nvdebug [--nvdebug-root DIR] [--gpu N]   nvdebug's /proc/gpuN, or a copy of it under DIR
//   mmio [--mmio-image FILE | --gpu N]        a register image, or BAR0 of the N-th NVIDIA GPU (root)
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/user_error.hpp"
#include "platform/gpu_presence.hpp"
#include "report/fact_text.hpp"
#include "report/source_json.hpp"
#include "sources/source_status_text.hpp"

namespace gpupart::cli {
namespace {

struct SourceOptions {
    std::string which;
    bool json = false;
    int gpu = 0;
    std::string nvdebug_root = "/proc";
    std::optional<std::string> mmio_image;
};

std::string mib(const Fact<std::uint64_t>& bytes) {
    return bytes.known() ? fmt::format("{} MiB", *bytes.value >> 20) : fact_text(bytes);
}

void print_nvml(const NvmlFacts& facts, const MpsFacts& mps) {
    fmt::print("{}\n", source_status_line(facts.status));
    for (const NvmlDevice& d : facts.devices) {
        fmt::print("gpu {}  {}  {}  {}\n", d.index, fact_text(d.name), fact_text(d.uuid), fact_text(d.pci_bus_id));
        fmt::print("  sms          {}\n", fact_text(d.sm_count));
        fmt::print("  memory       {} used of {}\n", mib(d.memory_used_bytes), mib(d.memory_total_bytes));
        fmt::print("  utilisation  gpu {}%, memory {}%\n", fact_text(d.gpu_utilization_percent), fact_text(d.memory_utilization_percent));
        fmt::print("  clocks       sm {} MHz (max {}), memory {} MHz\n", fact_text(d.sm_clock_mhz), fact_text(d.max_sm_clock_mhz),
                   fact_text(d.memory_clock_mhz));
        fmt::print("  mig          {} (after reset: {})\n", fact_text(d.mig_enabled), fact_text(d.mig_pending));
        if (!d.processes_unknown.empty()) fmt::print("  processes    {}\n", d.processes_unknown);
        else fmt::print("  processes    {}\n", d.processes.size());
        for (const NvmlProcess& p : d.processes)
            fmt::print("    {:>8}  {:<24} {}{}\n", p.pid, p.name, mib(p.used_memory_bytes),
                       p.mps_server ? fmt::format("  MPS server, clients {}", fmt::join(p.mps_clients, " ")) : "");
    }
    fmt::print("mps: {}{}\n", mps.state.detail, mps.state.static_partitioning ? " (static SM partitioning active)" : "");
    for (const auto& [server, clients] : mps.clients) fmt::print("  server {}: clients {}\n", server, fmt::join(clients, " "));
    if (!mps.clients_unknown.empty()) fmt::print("  clients unknown: {}\n", mps.clients_unknown);
}

void print_udev(const UdevFacts& facts) {
    fmt::print("{}\n", source_status_line(facts.status));
    for (const UdevGpu& g : facts.gpus)
        fmt::print("{}  device {}  class {}  driver {}  nodes {}\n", g.bus_id, g.device_id, g.pci_class,
                   g.driver.empty() ? "(none)" : g.driver, g.device_nodes.empty() ? "(none)" : fmt::format("{}", fmt::join(g.device_nodes, " ")));
}

template <typename Facts>
void print_floorplan(const Facts& facts) {
    fmt::print("GPC slots {}, TPC slots per GPC {}, enabled GPCs {}\n", fact_text(facts.gpc_slots), fact_text(facts.tpc_slots_per_gpc),
               facts.enabled_gpcs.known() ? fmt::format("{:#x}", *facts.enabled_gpcs.value) : fact_text(facts.enabled_gpcs));
    for (const auto& [gpc, mask] : facts.enabled_tpcs)
        fmt::print("  physical gpc {}: TPCs {}\n", gpc, mask.known() ? fmt::format("{:#x}", *mask.value) : fact_text(mask));
}

void print_nvdebug(const NvdebugFacts& facts) {
    fmt::print("{}\n", source_status_line(facts.status));
    if (facts.status.state == SourceState::absent) return;
    print_floorplan(facts);
    if (facts.cwd_unknown.empty()) fmt::print("SM order (CWD): {} TPCs\n", facts.cwd_tpcs.size());
    else fmt::print("SM order (CWD): {}\n", facts.cwd_unknown);
    if (facts.engines.known())
        for (const NvdebugEngine& e : *facts.engines.value)
            fmt::print("  engine {} instance {}  runlist base {}\n", e.type_name, e.instance.value_or(-1),
                       e.runlist_pri_base ? fmt::format("{:#x}", *e.runlist_pri_base) : "-");
    else fmt::print("engines: {}\n", facts.engines.unknown_reason);
    if (facts.copy_links.known())
        for (const NvdebugCopyLink& l : *facts.copy_links.value)
            fmt::print("  {} -> {}{:02}\n", l.from, l.to == NvdebugCopyLink::To::pce ? "PCE" : "LCE", l.to_index);
    for (const NvdebugRunlistFile& file : facts.runlists) {
        if (!file.runlist.known()) {
            fmt::print("  runlist{}: {}\n", file.index, file.runlist.unknown_reason);
            continue;
        }
        fmt::print("  runlist{}: {} TSG(s)\n", file.index, file.runlist.value->tsgs.size());
        for (const NvdebugTsg& tsg : file.runlist.value->tsgs) {
            std::vector<int> ids;
            for (const NvdebugChannel& c : tsg.channels) ids.push_back(c.id);
            fmt::print("    TSG {}: channels {}\n", tsg.id, fmt::join(ids, " "));
        }
    }
}

void print_mmio(const MmioFacts& facts) {
    fmt::print("{}\n", source_status_line(facts.status));
    if (!facts.architecture.known() || facts.status.state == SourceState::unsupported) return;
    print_floorplan(facts);
    if (facts.engines.known())
        for (const MmioEngine& e : *facts.engines.value)
            fmt::print("  engine {}{}{}\n", e.type_name, e.instance,
                       e.runlist_pri_base ? fmt::format("  runlist RAM {:#x}", *e.runlist_pri_base) : "");
    else fmt::print("engines: {}\n", facts.engines.unknown_reason);
    for (const MmioRunlist& r : facts.runlists)
        fmt::print("  runlist {} (RAM {:#x}): channels in use {}\n", fact_text(r.id), r.pri_base,
                   r.allocated_channels.known() ? (r.allocated_channels.value->empty() ? std::string("none")
                                                                                        : fmt::format("{}", fmt::join(*r.allocated_channels.value, " ")))
                                                : r.allocated_channels.unknown_reason);
    if (facts.copy_engines.known())
        for (const MmioCopyEngine& c : *facts.copy_engines.value)
            fmt::print("  LCE{} PCEs {:#x}{}\n", c.lce, c.pce_mask, c.shares_lce ? fmt::format(" (GRCE sharing LCE{})", *c.shares_lce) : "");
    else fmt::print("copy engines: {}\n", facts.copy_engines.unknown_reason);
}

MmioFacts mmio_facts(const SourceOptions& options) {
    if (options.mmio_image) return read_mmio_image(*options.mmio_image);
    const std::vector<PciGpu> gpus = find_nvidia_gpus();
    if (options.gpu >= static_cast<int>(gpus.size())) {
        MmioFacts facts;
        facts.status = SourceStatus{Source::mmio, SourceState::absent,
                                    fmt::format("no NVIDIA GPU {} on this machine ({} found); give --mmio-image FILE", options.gpu, gpus.size())};
        return facts;
    }
    return read_mmio(gpus[static_cast<std::size_t>(options.gpu)].bus_id);
}

int run_source(const SourceOptions& options) {
    nlohmann::ordered_json json;
    if (options.which == "nvml" || options.which == "mps") {
        NvmlFacts nvml = options.which == "nvml" ? read_nvml() : NvmlFacts{};
        const MpsFacts mps = read_mps();
        attach_mps_clients(nvml, mps);
        if (options.which == "mps") json = to_json(mps);
        else json = {{"nvml", to_json(nvml)}, {"mps", to_json(mps)}};
        if (!options.json) {
            if (options.which == "nvml") print_nvml(nvml, mps);
            else fmt::print("mps: {}\n", mps.state.detail);
        }
    } else if (options.which == "udev") {
        const UdevFacts facts = read_udev();
        json = to_json(facts);
        if (!options.json) print_udev(facts);
    } else if (options.which == "nvdebug") {
        const NvdebugFacts facts = read_nvdebug(options.nvdebug_root, options.gpu);
        json = to_json(facts);
        if (!options.json) print_nvdebug(facts);
    } else {
        const MmioFacts facts = mmio_facts(options);
        json = to_json(facts);
        if (!options.json) print_mmio(facts);
    }
    if (options.json) fmt::print("{}\n", json_answer(json));
    return 0;
}

}  // namespace

Command add_source_command(CLI::App& app) {
    auto options = std::make_shared<SourceOptions>();
    CLI::App* source = app.add_subcommand("source", "Show what one topology source (nvml, mps, udev, nvdebug, mmio) says, raw");
    source->add_option("name", options->which, "nvml, mps, udev, nvdebug or mmio")
        ->required()
        ->check(CLI::IsMember({"nvml", "mps", "udev", "nvdebug", "mmio"}));
    source->add_flag("--json", options->json, "Machine-readable output");
    source->add_option("--gpu", options->gpu, "GPU number (nvdebug: /proc/gpuN; mmio: N-th NVIDIA GPU in PCI order)")
        ->check(CLI::NonNegativeNumber);
    source->add_option("--nvdebug-root", options->nvdebug_root, "Directory holding nvdebug's gpuN directories (default /proc)");
    source->add_option("--mmio-image", options->mmio_image, "Register image file to decode instead of BAR0 (format: docs in mmio_image.hpp)");
    return {source, [options] {
                if (options->which != "nvdebug" && options->nvdebug_root != "/proc")
                    throw UserError("--nvdebug-root goes with `gpupart source nvdebug`");
                if (options->which != "mmio" && options->mmio_image) throw UserError("--mmio-image goes with `gpupart source mmio`");
                return run_source(*options);
            }};
}

}  // namespace gpupart::cli
