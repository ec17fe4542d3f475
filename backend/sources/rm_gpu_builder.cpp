#include "sources/rm_gpu_builder.hpp"

#include <algorithm>
#include <bit>
#include <set>

#include <fmt/format.h>

#include "sources/rm_engine_types.hpp"
#include "sources/rm_topology_builder.hpp"

namespace gpupart {
namespace {


struct Chip {
    std::string compute_capability;
    std::string architecture;
    int mask_width = 64;
};

// SM_VERSION is major << 8 | minor (ctrl2080gr.h). The architecture and descriptor mask width follow
// from it (128 mask bits from Hopper's V04_00 launch descriptors on, as the shim writes them).
std::optional<Chip> chip_of(std::uint32_t sm_version) {
    const unsigned major = sm_version >> 8;
    const unsigned minor = sm_version & 0xFF;
    if (major < 7 || major > 12 || minor > 9) return std::nullopt;
    Chip chip;
    chip.compute_capability = fmt::format("{}.{}", major, minor);
    if (major == 7) chip.architecture = minor == 5 ? "Turing" : "Volta";
    if (major == 8) chip.architecture = minor == 9 ? "Ada Lovelace" : "Ampere";
    if (major == 9) chip.architecture = "Hopper";
    if (major >= 10) chip.architecture = "Blackwell";
    chip.mask_width = major >= 9 ? 128 : 64;
    return chip;
}

void add_identity(const RmFacts& facts, Gpu& gpu) {
    gpu.driver_version = known_fact(facts.driver_version, from_rm("NV_ESC_CHECK_VERSION_STR"));
    gpu.pci_bus_id = known_fact(facts.card.bus_id, from_rm("NV_ESC_CARD_INFO"));
    if (facts.uuid.ok()) gpu.uuid = known_fact(*facts.uuid.value, from_rm("GPU_GET_GID_INFO"));
    else if (!gpu.uuid.known()) gpu.uuid = unknown_fact<std::string>(facts.uuid.why_not + " (NVML gives it)", from_rm("GPU_GET_GID_INFO"));
    if (facts.name.ok()) gpu.name = known_fact(*facts.name.value, from_rm("GPU_GET_NAME_STRING"));
    else if (!gpu.name.known()) gpu.name = unknown_fact<std::string>(facts.name.why_not + " (NVML gives it)", from_rm("GPU_GET_NAME_STRING"));
    if (!gpu.cuda_version.known()) gpu.cuda_version = unknown_fact<std::string>("the RM controls do not say (CUDA does)", from_rm(""));
    if (!gpu.descriptor_version.known())
        gpu.descriptor_version = unknown_fact<int>("run `gpupart probe`: only a launched kernel shows it", from_rm(""));

    const auto& info = facts.gr_info;
    const auto version = gr_info_value(facts, rm580::kGrInfoSmVersion);
    const auto chip = version ? chip_of(*version) : std::nullopt;
    if (chip) {
        const Provenance from{Source::inferred, fmt::format("SM version 0x{:x} (GR_GET_INFO_V2)", *version)};
        gpu.compute_capability = known_fact(chip->compute_capability, from);
        gpu.architecture = known_fact(chip->architecture, from);
        gpu.mask_width = chip->mask_width;
    } else {
        const std::string why = info.ok() ? "GR_GET_INFO_V2 gave no SM version gpupart knows" : info.why_not;
        gpu.compute_capability = unknown_fact<std::string>(why, from_rm("GR_GET_INFO_V2"));
        gpu.architecture = unknown_fact<std::string>(why, from_rm("GR_GET_INFO_V2"));
        gpu.notes.push_back("The SM version is not known, so the launch-mask width is taken as 128 bits (Hopper on).");
        gpu.mask_width = 128;
    }

    switch (facts.smc_mode.value.value_or(rm580::SmcMode::unsupported)) {
        case rm580::SmcMode::enabled: gpu.mig_enabled = known_fact(true, from_rm("GPU_GET_INFO_V2 (SMC mode)")); break;
        case rm580::SmcMode::disabled:
        case rm580::SmcMode::unsupported:
            gpu.mig_enabled = facts.smc_mode.ok() ? known_fact(false, from_rm("GPU_GET_INFO_V2 (SMC mode)"))
                                                  : unknown_fact<bool>(facts.smc_mode.why_not, from_rm("GPU_GET_INFO_V2"));
            break;
        default: gpu.mig_enabled = unknown_fact<bool>("a MIG mode change waits for a GPU reset", from_rm("GPU_GET_INFO_V2 (SMC mode)"));
    }
}

// TSGs on an engine's runlist: counted by the driver only where each runlist has its own channel RAM.
Fact<int> tsgs_of(const RmFacts& facts, std::uint32_t engine_type) {
    if (!facts.per_runlist_channel_ram.ok())
        return unknown_fact<int>(facts.per_runlist_channel_ram.why_not, from_rm("FIFO_GET_INFO (IS_PER_RUNLIST_CHANNEL_RAM_SUPPORTED)"));
    if (!*facts.per_runlist_channel_ram.value)
        return unknown_fact<int>("the driver counts TSGs for the whole GPU only (one channel RAM for all runlists)",
                                 from_rm("FIFO_GET_INFO (IS_PER_RUNLIST_CHANNEL_RAM_SUPPORTED = 0)"));
    const auto it = facts.tsgs_in_use.find(engine_type);
    if (it == facts.tsgs_in_use.end()) return unknown_fact<int>("this engine has no runlist to count on", from_rm("FIFO_GET_INFO"));
    if (!it->second.ok()) return unknown_fact<int>(it->second.why_not, from_rm("FIFO_GET_INFO"));
    return known_fact(*it->second.value, from_rm("FIFO_GET_INFO (CHANNEL_GROUPS_IN_USE_PER_ENGINE)"));
}

void add_engines(const RmFacts& facts, Gpu& gpu) {
    if (!facts.engines.ok()) {
        gpu.notes.push_back("Engines not known: " + facts.engines.why_not);
        return;
    }
    std::map<int, std::vector<std::uint32_t>> engines_of_runlist;
    for (std::uint32_t type : *facts.engines.value) {
        const auto known = rm_engine_type(type);
        Engine engine;
        engine.name = known ? known->name : fmt::format("ENGINE_0x{:x}", type);
        engine.kind = known ? known->kind : EngineKind::other;
        engine.instance = known ? known->instance : 0;
        engine.from = from_rm("GPU_GET_ENGINES_V2");
        if (!facts.runlist_of_engine.ok()) {
            engine.runlist = unknown_fact<int>(facts.runlist_of_engine.why_not, from_rm("GPU_GET_ENGINE_RUNLIST_PRI_BASE (root only)"));
        } else if (auto it = facts.runlist_of_engine.value->find(type); it != facts.runlist_of_engine.value->end()) {
            engine.runlist = known_fact(it->second, from_rm("GPU_GET_ENGINE_RUNLIST_PRI_BASE"));
            engines_of_runlist[it->second].push_back(type);
        } else {
            engine.runlist = unknown_fact<int>("the driver gives this engine no runlist", from_rm("GPU_GET_ENGINE_RUNLIST_PRI_BASE"));
        }
        engine.tsgs_in_use = tsgs_of(facts, type);
        gpu.engines.push_back(std::move(engine));
    }
    for (const auto& [id, types] : engines_of_runlist) {
        Runlist runlist;
        runlist.id = id;
        runlist.tsg_count = tsgs_of(facts, types.front());
        if (auto it = facts.channels.find(id); it != facts.channels.end() && it->second.ok()) runlist.channel_ids = *it->second.value;
        else if (it != facts.channels.end()) gpu.notes.push_back(fmt::format("Runlist {} channels not known: {}", id, it->second.why_not));
        runlist.from = from_rm("GPU_GET_ENGINE_RUNLIST_PRI_BASE, FIFO_GET_ALLOCATED_CHANNELS");
        gpu.runlists.push_back(std::move(runlist));
    }
    if (!facts.runlist_of_engine.ok())
        gpu.notes.push_back(fmt::format("Runlist ids and allocated channels: {} (GPU_GET_ENGINE_RUNLIST_PRI_BASE, "
                                        "FIFO_GET_ALLOCATED_CHANNELS are root-only controls).", facts.runlist_of_engine.why_not));
}

void add_fifo(const RmFacts& facts, Gpu& gpu) {
    auto fact = [&](std::uint32_t index, const char* name) {
        if (!facts.fifo_info.ok()) return unknown_fact<int>(facts.fifo_info.why_not, from_rm("FIFO_GET_INFO"));
        const auto it = facts.fifo_info.value->find(index);
        if (it == facts.fifo_info.value->end()) return unknown_fact<int>(fmt::format("FIFO_GET_INFO gave no {}", name), from_rm("FIFO_GET_INFO"));
        return known_fact(static_cast<int>(it->second), from_rm(fmt::format("FIFO_GET_INFO ({})", name)));
    };
    gpu.fifo.max_channel_groups = fact(rm580::kFifoMaxChannelGroups, "MAX_CHANNEL_GROUPS");
    gpu.fifo.max_channels_per_group = fact(rm580::kFifoMaxChannelsPerGroup, "MAX_CHANNELS_PER_GROUP");
    gpu.fifo.channel_groups_in_use = fact(rm580::kFifoChannelGroupsInUse, "CHANNEL_GROUPS_IN_USE");
}

void add_copy_engines(const RmFacts& facts, Gpu& gpu) {
    if (!facts.ce_caps.ok()) {
        gpu.copy_engines.pce_count = unknown_fact<int>(facts.ce_caps.why_not, from_rm("CE_GET_ALL_CAPS"));
        return;
    }
    std::uint32_t all_pces = 0;
    for (const auto& [lce, caps] : facts.ce_caps.value->caps) {
        const auto& pce = facts.pce_mask.at(lce);
        if (!pce.ok()) {
            gpu.notes.push_back(fmt::format("LCE{} left out of the copy-engine wiring: {}", lce, pce.why_not));
            continue;
        }
        const auto byte0 = static_cast<std::uint8_t>(caps & 0xFF);
        const auto byte1 = static_cast<std::uint8_t>(caps >> 8);
        gpu.copy_engines.lces.push_back(LogicalCopyEngine{lce, *pce.value, (byte0 & 0x01) != 0, (byte0 & 0x02) != 0,
                                                          fmt::format("{:02x}{:02x}", byte0, byte1),
                                                          from_rm("CE_GET_ALL_CAPS (GRCE, SHARED), CE_GET_CE_PCE_MASK")});
        all_pces |= *pce.value;
    }
    gpu.copy_engines.pce_count = known_fact(32 - std::countl_zero(all_pces),
                                            Provenance{Source::inferred, "highest PCE any LCE mask names, plus one"});
}

void add_processes(const RmFacts& facts, int own_pid, Gpu& gpu) {
    if (!facts.pids.ok()) {
        gpu.notes.push_back("Processes using the GPU not known: " + facts.pids.why_not);
        return;
    }
    for (int pid : *facts.pids.value) {
        if (pid == own_pid) continue;  // gpupart itself, holding the GPU open to read it
        Process process;
        process.pid = pid;
        process.gpu_memory_bytes = unknown_fact<std::uint64_t>("the RM controls do not say (NVML does)", from_rm("GPU_GET_PIDS"));
        process.from = from_rm("GPU_GET_PIDS (processes with objects on this GPU)");
        gpu.processes.push_back(std::move(process));
    }
}

}  // namespace

void add_rm_facts(const RmFacts& facts, int own_pid, Gpu& gpu) {
    add_identity(facts, gpu);
    add_rm_topology(facts, gpu);
    add_engines(facts, gpu);
    add_fifo(facts, gpu);
    add_copy_engines(facts, gpu);
    add_processes(facts, own_pid, gpu);
}

}  // namespace gpupart
