#include "h200_snapshot.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "recorded_logs.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart::recorded {
namespace {

// The fixtures the built-in H200 is built from. The live capture is the base: the driver's own
// floorplan (physical GPCs, slots, SM order) joined with the probe's mask bits. The 2026-11-22 logs
// were measured another way (one mask bit at a time with %smid, and thread-block clusters, no driver
// controls) and must agree with it: the generator refuses to write a snapshot where they do not.
const char* const kLive = "tests/fixtures/live-h200/live-h200.json";
const char* const kLiveRoot = "tests/fixtures/live-h200/root-h200.txt";
const char* const kMaskbitsLog = "tests/fixtures/h200/2026-11-22-maskbits.log";
const char* const kCorunLog = "tests/fixtures/h200/2026-11-22-corun.log";
const char* const kEnvLog = "tests/fixtures/h200/2026-11-22-env.log";

Provenance recorded(std::string detail) { return Provenance{Source::recorded, std::move(detail)}; }

// The capture names the probe's cache file under a temporary directory of the test run; what a reader
// needs is which method gave the fact, so the path is shortened to the file's role.
std::string without_temp_paths(std::string detail) {
    for (std::size_t at; (at = detail.find("/tmp/")) != std::string::npos;) {
        std::size_t stop = detail.find_first_of(" )", at);
        if (stop == std::string::npos) stop = detail.size();
        detail.replace(at, stop - at, "the probe's cache file");
    }
    return detail;
}

// A fact of the live capture, re-sourced as a recording that still says how it was measured.
Provenance from_live(const Provenance& live) {
    return recorded(fmt::format("{} ({}: {})", kLive, to_string(live.source), without_temp_paths(live.detail)));
}

template <typename T>
void resource(Fact<T>& fact) {
    fact.from = from_live(fact.from);
}

// Every mask bit's SMs and the holes must be what the %smid log measured, bit for bit.
void check_against_maskbits_log(const Gpu& gpu, const MaskBitsLog& log) {
    std::map<int, std::vector<int>> live;
    for (const auto& tpc : gpu.tpcs)
        if (tpc.mask_bit) live[*tpc.mask_bit] = tpc.sms;
    if (live != log.bit_sms) throw std::runtime_error(fmt::format("{} and {} disagree on the SMs of a mask bit", kLive, kMaskbitsLog));
    std::vector<int> holes;
    for (const auto& hole : gpu.holes) holes.push_back(hole.mask_bit);
    std::vector<int> log_holes = log.holes;
    std::sort(log_holes.begin(), log_holes.end());
    if (holes != log_holes) throw std::runtime_error(fmt::format("{} and {} disagree on the holes", kLive, kMaskbitsLog));
    if (gpu.sm_count.value != log.sm_count)
        throw std::runtime_error(fmt::format("{} and {} disagree on the SM count", kLive, kMaskbitsLog));
}

// SMs that shared an 8-block thread-block cluster are in one GPC (a cluster never spans GPCs), so
// every cluster group must lie inside one physical GPC of the driver's floorplan. Returns, per mask
// bit, whether its SMs shared a cluster (the second method confirming the driver's GPC).
std::set<int> check_cluster_groups(const Gpu& gpu, const std::vector<std::vector<int>>& groups) {
    std::map<int, const Tpc*> tpc_of_sm;
    for (const auto& tpc : gpu.tpcs)
        for (int sm : tpc.sms) tpc_of_sm[sm] = &tpc;
    std::set<int> confirmed;
    for (const auto& group : groups) {
        if (group.size() < 2) continue;
        std::set<int> gpcs;
        for (int sm : group) {
            auto it = tpc_of_sm.find(sm);
            if (it == tpc_of_sm.end() || !it->second->gpc)
                throw std::runtime_error(fmt::format("{}: SM {} of a cluster group has no GPC in {}", kCorunLog, sm, kLive));
            gpcs.insert(*it->second->gpc);
            confirmed.insert(*it->second->mask_bit);
        }
        if (gpcs.size() != 1)
            throw std::runtime_error(fmt::format("{}: the cluster group starting at SM {} spans {} physical GPCs of {}",
                                                 kCorunLog, group[0], gpcs.size(), kLive));
    }
    return confirmed;
}

// gpupart numbers the built-in H200's GPCs in mask-bit order (gpc0 holds mask bit 0), as it always
// has: profiles, examples and the demo's layouts written against builtin:h200 keep their meaning. The
// driver's ids stay in physical_id and logical_id, and each GPC's source says which physical GPC it is.
void number_gpcs_in_mask_bit_order(Gpu& gpu) {
    std::map<int, int> lowest_bit;  // physical index -> its lowest mask bit
    for (const auto& tpc : gpu.tpcs) {
        auto [it, fresh] = lowest_bit.emplace(*tpc.gpc, *tpc.mask_bit);
        if (!fresh) it->second = std::min(it->second, *tpc.mask_bit);
    }
    if (lowest_bit.size() != gpu.gpcs.size()) throw std::runtime_error(fmt::format("{}: a GPC without a TPC", kLive));
    std::vector<std::pair<int, int>> order;  // (lowest bit, physical index)
    for (const auto& [gpc, bit] : lowest_bit) order.emplace_back(bit, gpc);
    std::sort(order.begin(), order.end());
    std::map<int, int> new_index;
    for (std::size_t i = 0; i < order.size(); ++i) new_index[order[i].second] = static_cast<int>(i);
    std::vector<Gpc> gpcs(gpu.gpcs.size());
    for (auto gpc : gpu.gpcs) {
        const int index = new_index.at(gpc.index);
        gpc.from.detail += fmt::format("; gpupart's gpc{} (mask-bit order) is the driver's physical GPC {}", index,
                                       gpc.physical_id.value_or(gpc.index));
        gpc.index = index;
        gpcs[static_cast<std::size_t>(index)] = std::move(gpc);
    }
    gpu.gpcs = std::move(gpcs);
    for (auto& tpc : gpu.tpcs) tpc.gpc = new_index.at(*tpc.gpc);
}

// Runlist ids are root-only controls; the capture's root run printed them (`gpupart engines`).
void add_runlists(Gpu& gpu, const std::string& fixtures) {
    const auto runlists = parse_engine_runlists(read_text(fixtures + "/live-h200/root-h200.txt"));
    const Provenance from = recorded(fmt::format("{} (rmctrl as root: GPU_GET_ENGINE_RUNLIST_PRI_BASE)", kLiveRoot));
    for (auto& engine : gpu.engines) {
        auto it = runlists.engine_runlist.find(engine.name);
        if (it != runlists.engine_runlist.end()) engine.runlist = known_fact(it->second, from);
        else engine.runlist = unknown_fact<int>("the driver gives this engine no runlist", from);
        resource(engine.tsgs_in_use);
        engine.from = from_live(engine.from);
    }
    std::set<int> ids;
    for (const auto& [name, id] : runlists.engine_runlist) ids.insert(id);
    for (int id : ids) {
        Runlist runlist;
        runlist.id = id;
        runlist.tsg_count = unknown_fact<int>("the driver counts TSGs for the whole GPU only", from);
        if (auto it = runlists.channels.find(id); it != runlists.channels.end()) runlist.channel_ids = it->second;
        runlist.from = recorded(fmt::format("{} (rmctrl as root: GPU_GET_ENGINE_RUNLIST_PRI_BASE, "
                                            "FIFO_GET_ALLOCATED_CHANNELS)", kLiveRoot));
        gpu.runlists.push_back(std::move(runlist));
    }
}

}  // namespace

Snapshot make_h200_snapshot(const std::string& fixtures) {
    Snapshot live = load_snapshot(fixtures + "/live-h200/live-h200.json");
    if (live.gpus.size() != 1) throw std::runtime_error(fmt::format("{} holds {} GPUs, not one", kLive, live.gpus.size()));
    Gpu gpu = std::move(live.gpus.front());
    gpu.index = 0;
    gpu.processes.clear();  // the processes of the capture were the test's own

    const MaskBitsLog log = parse_maskbits_log(read_text(fixtures + "/h200/2026-11-22-maskbits.log"));
    check_against_maskbits_log(gpu, log);
    const std::set<int> in_clusters = check_cluster_groups(gpu, parse_cluster_groups(read_text(fixtures + "/h200/2026-11-22-corun.log")));
    if (parse_pci_bus_id(read_text(fixtures + "/h200/2026-11-22-env.log")) != gpu.pci_bus_id.value)
        throw std::runtime_error(fmt::format("{} and {} name different PCI devices", kLive, kEnvLog));

    // A UUID names one board; the built-in stands for no GPU of the machine it runs on, and its demo
    // processes must never be keyed (in the registry) as if they ran on a real one.
    gpu.uuid = unknown_fact<std::string>(fmt::format("a UUID names one board: not carried into the built-in recording "
                                                     "({} has the capture's)", kLive),
                                         from_live(gpu.uuid.from));
    for (auto* fact : {&gpu.name, &gpu.pci_bus_id, &gpu.architecture, &gpu.compute_capability, &gpu.driver_version})
        resource(*fact);
    gpu.cuda_version = known_fact<std::string>("13.0", recorded(std::string(kMaskbitsLog) + " (driver=13000)"));
    resource(gpu.sm_count);
    gpu.sm_count.from.detail += fmt::format("; the same {} SMs in {}", log.sm_count, kMaskbitsLog);
    resource(gpu.descriptor_version);
    resource(gpu.mig_enabled);
    for (auto& gpc : gpu.gpcs) gpc.from = from_live(gpc.from);
    number_gpcs_in_mask_bit_order(gpu);
    for (auto& tpc : gpu.tpcs) {
        tpc.from = from_live(tpc.from);
        tpc.from.detail += fmt::format("; SMs confirmed by {} (%smid per block)", kMaskbitsLog);
        tpc.gpc_note = in_clusters.count(*tpc.mask_bit)
                           ? fmt::format("the driver's floorplan; its SMs also shared thread-block clusters with this GPC ({})", kCorunLog)
                           : fmt::format("the driver's floorplan only: its SMs never shared an 8-block cluster with another SM ({})",
                                         kCorunLog);
    }
    for (auto& hole : gpu.holes) hole.from = from_live(hole.from);
    for (auto& lce : gpu.copy_engines.lces) lce.from = from_live(lce.from);
    resource(gpu.copy_engines.pce_count);
    for (auto* fact : {&gpu.fifo.max_channel_groups, &gpu.fifo.max_channels_per_group, &gpu.fifo.channel_groups_in_use})
        resource(*fact);
    gpu.runlists.clear();
    add_runlists(gpu, fixtures);
    gpu.notes = {
        "Recorded on the project's H200 test machine (driver 580.159.04, CUDA 13.0): the driver's RM controls and the probe "
        "on 2026-11-23 (tests/fixtures/live-h200), the %smid and thread-block-cluster logs on 2026-11-22 (tests/fixtures/h200).",
        "GPCs are the physical GPCs of the driver's floorplan, numbered by gpupart in mask-bit order (gpc0 holds mask bit 0; "
        "each GPC names its physical id); every thread-block cluster measured on 2026-11-22 lies inside one of them, and both "
        "days give every mask bit the same SMs.",
        "Holes are mask bits no block ran on; the driver's floorplan does not say which GPC they would belong to.",
        "Runlist ids were read as root (root-h200.txt); the channel groups in use were the recording run's own.",
    };
    return Snapshot{"2026-11-23", "NVIDIA H200 recorded on the gpupart test machine (no GPU needed)", {gpu}};
}

namespace {

Gpu literature_gpu(const std::string& name, const std::string& arch, const std::string& cc, const std::string& table,
                   const std::vector<std::pair<std::string, int>>& engine_runlists, const std::vector<int>& empty_runlists) {
    const Provenance from{Source::literature, "Bakita & Anderson, RTAS 2024, " + table};
    Gpu gpu;
    gpu.name = known_fact(name, from);
    gpu.architecture = known_fact(arch, from);
    gpu.compute_capability = known_fact(cc, Provenance{Source::literature, "Bakita & Anderson, RTAS 2024, Table I"});
    for (auto* fact : {&gpu.uuid, &gpu.pci_bus_id, &gpu.driver_version, &gpu.cuda_version})
        *fact = unknown_fact<std::string>("not in the source", from);
    gpu.sm_count = unknown_fact<int>("not in the source", from);
    gpu.descriptor_version = unknown_fact<int>("not in the source", from);
    gpu.mig_enabled = unknown_fact<bool>("not in the source", from);
    gpu.mask_width = 64;  // pre-Hopper descriptors carry a 64-bit TPC mask
    std::set<int> runlists(empty_runlists.begin(), empty_runlists.end());
    for (const auto& [engine_name, runlist] : engine_runlists) {
        EngineKind kind = EngineKind::other;
        int instance = 0;
        if (engine_name.starts_with("GR")) kind = EngineKind::graphics;
        if (engine_name.starts_with("COPY")) kind = EngineKind::copy;
        if (engine_name.starts_with("NVDEC")) kind = EngineKind::video_decoder;
        if (engine_name.starts_with("NVENC")) kind = EngineKind::video_encoder;
        if (engine_name.starts_with("NVJPG")) kind = EngineKind::jpeg;
        if (engine_name == "OFA") kind = EngineKind::optical_flow;
        if (engine_name == "SEQ") kind = EngineKind::sequencer;
        const auto digit = engine_name.find_first_of("0123456789");
        if (digit != std::string::npos) instance = std::stoi(engine_name.substr(digit));
        gpu.engines.push_back(Engine{engine_name, kind, instance, known_fact(runlist, from),
                                     unknown_fact<int>("not in the source", from), from});
        runlists.insert(runlist);
    }
    for (int id : runlists) {
        Runlist runlist;
        runlist.id = id;
        runlist.tsg_count = unknown_fact<int>("not in the source", from);
        runlist.from = from;
        gpu.runlists.push_back(std::move(runlist));
    }
    gpu.copy_engines.pce_count = unknown_fact<int>("Fig. 11 is a drawing; its wiring is not in gpupart's copy of the paper", from);
    for (auto* fact : {&gpu.fifo.max_channel_groups, &gpu.fifo.max_channels_per_group, &gpu.fifo.channel_groups_in_use})
        *fact = unknown_fact<int>("not in the source", from);
    gpu.notes = {"Engines and runlists from " + table + " of Bakita & Anderson, RTAS 2024 (nvdebug device_info). COPY0/COPY1 are the GRCEs.",
                 "No TPC layout: the paper gives none for this GPU.",
                 "Runlists named N/A in the paper have no engine listed."};
    return gpu;
}

}  // namespace

Snapshot make_gtx1060_snapshot() {
    Gpu gpu = literature_gpu("NVIDIA GeForce GTX 1060 3GB", "Pascal", "6.1", "Table II",
                             {{"GR0", 0}, {"COPY0", 0}, {"COPY1", 0}, {"NVDEC0", 1}, {"NVENC0", 2}, {"SEQ", 3},
                              {"COPY2", 5}, {"COPY3", 6}},
                             {4});
    return Snapshot{"2024", "GTX 1060 3GB engines and runlists from Bakita & Anderson, RTAS 2024, Table II (literature, not measured by gpupart)", {gpu}};
}

Snapshot make_rtx6000ada_snapshot() {
    Gpu gpu = literature_gpu("NVIDIA RTX 6000 Ada Generation", "Ada Lovelace", "8.9", "Table IV",
                             {{"GR0", 0}, {"COPY0", 0}, {"COPY1", 0}, {"COPY2", 1}, {"COPY3", 2}, {"COPY4", 3},
                              {"NVDEC0", 4}, {"NVDEC1", 5}, {"NVDEC2", 6}, {"NVENC0", 8}, {"NVENC1", 9}, {"NVENC2", 10},
                              {"NVJPG0", 11}, {"NVJPG1", 12}, {"NVJPG2", 13}, {"NVJPG3", 14}, {"OFA", 15}, {"SEQ", 16}},
                             {7});
    return Snapshot{"2024", "RTX 6000 Ada engines and runlists from Bakita & Anderson, RTAS 2024, Table IV (literature, not measured by gpupart)", {gpu}};
}

}  // namespace gpupart::recorded
