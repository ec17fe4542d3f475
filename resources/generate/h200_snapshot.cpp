#include "h200_snapshot.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "recorded_logs.hpp"
#include "sources/rm_engine_types.hpp"

namespace gpupart::recorded {
namespace {

constexpr int kBitsPerGpcGroup = 9;  // HARDWARE.md section 3: mask bits come in groups of 9 per GPC
const char* const kMaskbitsLog = "tests/fixtures/h200/2026-11-22-maskbits.log";
const char* const kCorunLog = "tests/fixtures/h200/2026-11-22-corun.log";
const char* const kEnvLog = "tests/fixtures/h200/2026-11-22-env.log";
const char* const kRmReplies = "tests/fixtures/h100-rmctrl/replies-root.txt";
const char* const kRmReplies2 = "tests/fixtures/h100-rmctrl/replies2-root.txt";

Provenance recorded(std::string detail) { return Provenance{Source::recorded, std::move(detail)}; }

// Assigns each multi-SM cluster group to the 9-bit mask-bit window it covers; groups become gpc0..N
// in mask-bit order. Throws if a group's bits do not fall in one window (then the layout is not
// what HARDWARE.md describes, and nothing may be guessed).
std::vector<int> window_of_groups(const MaskBitsLog& log, const std::vector<std::vector<int>>& groups,
                                  std::map<int, int>& gpc_of_bit) {
    std::vector<int> windows;
    for (const auto& group : groups) {
        if (group.size() < 2) continue;  // an SM that shared no cluster: GPC not determined
        const std::set<int> sms(group.begin(), group.end());
        std::set<int> window_ids;
        std::vector<int> bits;
        for (const auto& [bit, bit_sms] : log.bit_sms)
            if (sms.count(bit_sms.front())) {
                bits.push_back(bit);
                window_ids.insert(bit / kBitsPerGpcGroup);
                for (int sm : bit_sms)
                    if (!sms.count(sm)) throw std::runtime_error(fmt::format("bit {} straddles two cluster groups", bit));
            }
        if (window_ids.size() != 1)
            throw std::runtime_error(fmt::format("cluster group starting at SM {} spans several 9-bit windows", group[0]));
        std::size_t covered = 0;
        for (int bit : bits) covered += log.bit_sms.at(bit).size();
        if (covered != group.size()) throw std::runtime_error("a cluster group holds SMs no mask bit drives");
        windows.push_back(*window_ids.begin());
    }
    std::sort(windows.begin(), windows.end());
    if (std::adjacent_find(windows.begin(), windows.end()) != windows.end())
        throw std::runtime_error("two cluster groups share a 9-bit window");
    for (std::size_t gpc = 0; gpc < windows.size(); ++gpc)
        for (int slot = 0; slot < kBitsPerGpcGroup; ++slot)
            gpc_of_bit[windows[gpc] * kBitsPerGpcGroup + slot] = static_cast<int>(gpc);
    return windows;
}

void add_topology(Gpu& gpu, const std::string& fixtures) {
    const MaskBitsLog log = parse_maskbits_log(read_text(fixtures + "/h200/2026-11-22-maskbits.log"));
    const auto groups = parse_cluster_groups(read_text(fixtures + "/h200/2026-11-22-corun.log"));
    gpu.sm_count = known_fact(log.sm_count, recorded(kMaskbitsLog));
    gpu.descriptor_version = known_fact(log.descriptor_version, recorded(std::string(kMaskbitsLog) + " (tmdver)"));

    std::map<int, int> gpc_of_bit;
    const std::vector<int> windows = window_of_groups(log, groups, gpc_of_bit);
    for (std::size_t gpc = 0; gpc < windows.size(); ++gpc)
        gpu.gpcs.push_back(Gpc{static_cast<int>(gpc), std::nullopt, std::nullopt, kBitsPerGpcGroup,
                               recorded(fmt::format("{}: SMs sharing 8-block thread-block clusters, mask bits {}-{}",
                                                    kCorunLog, windows[gpc] * kBitsPerGpcGroup,
                                                    windows[gpc] * kBitsPerGpcGroup + kBitsPerGpcGroup - 1))});

    for (const auto& [bit, sms] : log.bit_sms) {
        Tpc tpc;
        tpc.mask_bit = bit;
        tpc.sms = sms;
        tpc.from = recorded(bit == 0 ? std::string(kMaskbitsLog) + " (anchor bit: the TPC0-3 run less bits 1-3)"
                                     : std::string(kMaskbitsLog));
        if (auto it = gpc_of_bit.find(bit); it != gpc_of_bit.end()) {
            tpc.gpc = it->second;
            tpc.slot = bit % kBitsPerGpcGroup;
            tpc.gpc_note = "its SMs shared thread-block clusters with the rest of this GPC";
        } else {
            tpc.gpc_note = "GPC not determined: its SMs never shared an 8-block cluster with another SM";
        }
        gpu.tpcs.push_back(std::move(tpc));
    }
    std::vector<int> holes = log.holes;
    std::sort(holes.begin(), holes.end());
    for (int bit : holes) {
        Hole hole{bit, std::nullopt, std::nullopt, recorded(std::string(kMaskbitsLog) + ": no block ran with this bit")};
        if (auto it = gpc_of_bit.find(bit); it != gpc_of_bit.end()) {
            hole.gpc = it->second;
            hole.slot = bit % kBitsPerGpcGroup;
        }
        gpu.holes.push_back(hole);
    }
}

void add_engines(Gpu& gpu, const std::string& fixtures) {
    const RmReplies replies = parse_rm_replies(read_text(fixtures + "/h100-rmctrl/replies-root.txt"),
                                               read_text(fixtures + "/h100-rmctrl/replies2-root.txt"));
    const std::string from = fmt::format("{} (GPU_GET_ENGINES_V2) on the H100 test machine: same GH100 chip and driver, "
                                         "not read on this H200", kRmReplies);
    std::map<int, std::vector<std::string>> runlist_engines;
    for (std::uint32_t type : replies.engine_types) {
        auto known = rm_engine_type(type);
        if (!known) throw std::runtime_error(fmt::format("engine type {} is not in the engine table", type));
        Engine engine{known->name, known->kind, known->instance, {},
                      unknown_fact<int>("not recorded", recorded(kRmReplies)), recorded(from)};
        if (auto it = replies.runlist_of.find(type); it != replies.runlist_of.end()) {
            engine.runlist = known_fact(it->second, recorded(fmt::format(
                                                        "{} (GPU_GET_ENGINE_RUNLIST_PRI_BASE, as root) on the H100", kRmReplies2)));
            runlist_engines[it->second].push_back(known->name);
        } else {
            engine.runlist = unknown_fact<int>("not recorded (the recording asked only GR0 and COPY0-4)",
                                               recorded(kRmReplies2));
        }
        gpu.engines.push_back(std::move(engine));
    }
    for (const auto& [id, names] : runlist_engines) {
        Runlist runlist;
        runlist.id = id;
        runlist.tsg_count = unknown_fact<int>("not recorded", recorded(kRmReplies2));
        runlist.from = recorded(fmt::format("{} on the H100: runlist of {}", kRmReplies2, fmt::join(names, ", ")));
        gpu.runlists.push_back(std::move(runlist));
    }
    std::uint32_t all_pces = 0;
    for (const auto& ce : replies.copy_engines) {
        const auto caps0 = std::stoul(ce.caps_hex.substr(0, 2), nullptr, 16);
        gpu.copy_engines.lces.push_back(LogicalCopyEngine{
            ce.lce, ce.pce_mask, (caps0 & 0x01) != 0, (caps0 & 0x02) != 0, ce.caps_hex,
            recorded(fmt::format("{} (CE_GET_CE_PCE_MASK, CE_GET_CAPS_V2) on the H100", kRmReplies))});
        all_pces |= ce.pce_mask;
    }
    const int pce_count = 32 - std::countl_zero(all_pces);
    gpu.copy_engines.pce_count = known_fact(pce_count, Provenance{Source::inferred, "highest PCE any LCE mask names, plus one"});
    for (auto* fact : {&gpu.fifo.max_channel_groups, &gpu.fifo.max_channels_per_group, &gpu.fifo.channel_groups_in_use})
        *fact = unknown_fact<int>("not recorded on the H200", recorded("tests/fixtures/h200/README.md"));
}

}  // namespace

Snapshot make_h200_snapshot(const std::string& fixtures) {
    Gpu gpu;
    gpu.name = known_fact<std::string>("NVIDIA H200", recorded("tests/fixtures/h200/README.md"));
    gpu.uuid = unknown_fact<std::string>("not recorded", recorded("tests/fixtures/h200/README.md"));
    gpu.pci_bus_id = known_fact(parse_pci_bus_id(read_text(fixtures + "/h200/2026-11-22-env.log")), recorded(kEnvLog));
    gpu.architecture = known_fact<std::string>("Hopper", recorded("tests/fixtures/h200/README.md"));
    gpu.compute_capability = known_fact<std::string>("9.0", recorded(std::string(kMaskbitsLog) + " (nvcc -arch=sm_90)"));
    gpu.driver_version = known_fact<std::string>("580.159.04", recorded("tests/fixtures/h200/README.md"));
    gpu.cuda_version = known_fact<std::string>("13.0", recorded(std::string(kMaskbitsLog) + " (driver=13000)"));
    gpu.mig_enabled = unknown_fact<bool>("not recorded on the H200", recorded("tests/fixtures/h200/README.md"));
    add_topology(gpu, fixtures);
    add_engines(gpu, fixtures);
    gpu.notes = {
        "Recorded on the project's H200 test machine on 2026-11-22 (driver 580.159.04, CUDA 13.0), without MPS.",
        "GPC numbers are gpupart's (mask-bit order); the hardware GPC ids were not recorded.",
        "TPCs at mask bits 75, 78, 81, 83 never shared a thread-block cluster, so their GPC is not determined.",
        "Engines, runlists and copy-engine wiring were recorded on the H100 test machine (same GH100 chip, same driver), "
        "not on this H200.",
    };
    return Snapshot{"2026-11-22", "NVIDIA H200 recorded on the gpupart test machine (no GPU needed)", {gpu}};
}

namespace {

Gpu literature_gpu(const std::string& name, const std::string& arch, const std::string& cc, const std::string& table,
                   const std::vector<std::pair<std::string, int>>& engine_runlists, const std::vector<int>& empty_runlists) {
    const Provenance from{Source::literature, "seed 003 (Bakita & Anderson, RTAS 2024), " + table};
    Gpu gpu;
    gpu.name = known_fact(name, from);
    gpu.architecture = known_fact(arch, from);
    gpu.compute_capability = known_fact(cc, Provenance{Source::literature, "seed 003, Table I"});
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
    gpu.notes = {"Engines and runlists from " + table + " of seed 003 (nvdebug device_info). COPY0/COPY1 are the GRCEs.",
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
    return Snapshot{"2024", "GTX 1060 3GB engines and runlists from seed 003 Table II (literature, not measured by gpupart)", {gpu}};
}

Snapshot make_rtx6000ada_snapshot() {
    Gpu gpu = literature_gpu("NVIDIA RTX 6000 Ada Generation", "Ada Lovelace", "8.9", "Table IV",
                             {{"GR0", 0}, {"COPY0", 0}, {"COPY1", 0}, {"COPY2", 1}, {"COPY3", 2}, {"COPY4", 3},
                              {"NVDEC0", 4}, {"NVDEC1", 5}, {"NVDEC2", 6}, {"NVENC0", 8}, {"NVENC1", 9}, {"NVENC2", 10},
                              {"NVJPG0", 11}, {"NVJPG1", 12}, {"NVJPG2", 13}, {"NVJPG3", 14}, {"OFA", 15}, {"SEQ", 16}},
                             {7});
    return Snapshot{"2024", "RTX 6000 Ada engines and runlists from seed 003 Table IV (literature, not measured by gpupart)", {gpu}};
}

}  // namespace gpupart::recorded
