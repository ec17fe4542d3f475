// The live snapshots recorded on the H100 and H200 test machines (tests/fixtures/live-h100, live-h200:
// `gpupart export` as uid 65534 after `gpupart probe`, see their READMEs) load, hold the floorplan the
// RM controls and the probe gave, and agree with the independent recording behind the built-in H200.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "model/gpu_queries.hpp"
#include "report/topology_text.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

const Gpu& live(const std::string& label) {
    static std::map<std::string, Snapshot> loaded;
    auto it = loaded.find(label);
    if (it == loaded.end())
        it = loaded.emplace(label, load_snapshot(std::string(GPUPART_FIXTURES) + "/live-" + label + "/live-" + label + ".json")).first;
    return it->second.gpus.at(0);
}

std::map<int, std::uint32_t> tpc_masks_by_physical_gpc(const Gpu& gpu) {
    std::map<int, std::uint32_t> masks;
    for (const Tpc& tpc : gpu.tpcs) masks[*gpu.gpcs.at(static_cast<std::size_t>(*tpc.gpc)).physical_id] |= 1u << *tpc.slot;
    return masks;
}

void expect_whole_floorplan(const Gpu& gpu) {
    EXPECT_EQ(find_inconsistency(gpu), std::nullopt);
    EXPECT_EQ(topology_summary(gpu), "66 TPCs, 132 SMs, 8 GPCs, 62 holes in the 128-bit TPC mask");
    EXPECT_TRUE(mask_bits_known(gpu));
    EXPECT_TRUE(undetermined_gpc_tpcs(gpu).empty());  // the RM floorplan places bits 75, 78, 81, 83 too
    EXPECT_EQ(hole_bits(gpu).to_list(), "4-8,17,26,35,44,53,72-74,76-77,79-80,82,84-127");
    for (const Tpc& tpc : gpu.tpcs) {
        EXPECT_EQ(tpc.sms.size(), 2u);
        EXPECT_EQ(tpc.from.source, Source::rmctrl);
        EXPECT_NE(tpc.from.detail.find("mask bit from the probe"), std::string::npos);
    }
    EXPECT_EQ(gpu.descriptor_version.value, 0x40);
    EXPECT_EQ(gpu.descriptor_version.from.source, Source::probe);
    EXPECT_EQ(gpu.driver_version.value, "580.159.04");
    EXPECT_EQ(gpu.mig_enabled.value, false);
    // Engines and copy engines as a normal user: runlists need root; GRCE0/1 share PCEs with LCE2/3.
    EXPECT_EQ(gpu.engines.size(), 23u);
    for (const Engine& engine : gpu.engines) EXPECT_EQ(engine.runlist.unknown_reason, "needs root") << engine.name;
    const auto shared = shared_copy_engines(gpu);
    ASSERT_EQ(shared.size(), 2u);
    EXPECT_EQ(shared[0].pce_list(), "12,14");
    EXPECT_EQ(shared[1].pce_list(), "13,15");
}

}  // namespace

TEST(LiveSnapshots, H100) {
    const Gpu& gpu = live("h100");
    EXPECT_EQ(gpu.name.value, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.name.from.source, Source::nvml);
    expect_whole_floorplan(gpu);
    // This board's floorsweeping, as GR_GET_TPC_MASK gave it (another H100 than tests/fixtures/h100-rmctrl's).
    const std::map<int, std::uint32_t> recorded = {{0, 0x1ff}, {1, 0x1bf}, {2, 0x1bf}, {3, 0x1ef},
                                                   {4, 0x1bf}, {5, 0x1ff}, {6, 0x1bf}, {7, 0x1bf}};
    EXPECT_EQ(tpc_masks_by_physical_gpc(gpu), recorded);
}

TEST(LiveSnapshots, H200) {
    const Gpu& gpu = live("h200");
    EXPECT_EQ(gpu.name.value, "NVIDIA H200");
    expect_whole_floorplan(gpu);
    const std::map<int, std::uint32_t> recorded = {{0, 0x1ff}, {1, 0x1bf}, {2, 0x1bf}, {3, 0x1bf},
                                                   {4, 0x1bf}, {5, 0x1ff}, {6, 0x1bf}, {7, 0x1bf}};
    EXPECT_EQ(tpc_masks_by_physical_gpc(gpu), recorded);
}

// The built-in H200 was measured without the driver: mask bits by the probe's method and GPCs by which
// SMs share thread-block clusters. The live H200 got its GPCs from the RM controls instead. Both must
// give every bit the same SMs, and every GPC the cluster method found must lie inside one physical GPC.
TEST(LiveSnapshots, TheLiveH200AgreesWithTheIndependentlyRecordedBuiltIn) {
    const Gpu& gpu = live("h200");
    const Gpu builtin = load_snapshot("builtin:h200").gpus.at(0);
    ASSERT_EQ(real_tpcs(gpu), real_tpcs(builtin));
    std::map<int, std::set<int>> live_gpcs_of_cluster_gpc;
    for (const Tpc& recorded : builtin.tpcs) {
        const Tpc* now = find_tpc_by_bit(gpu, *recorded.mask_bit);
        ASSERT_NE(now, nullptr);
        EXPECT_EQ(now->sms, recorded.sms) << "bit " << *recorded.mask_bit;
        if (recorded.gpc) live_gpcs_of_cluster_gpc[*recorded.gpc].insert(*now->gpc);
    }
    ASSERT_EQ(live_gpcs_of_cluster_gpc.size(), 8u);
    std::set<int> used;
    for (const auto& [cluster_gpc, live_gpcs] : live_gpcs_of_cluster_gpc) {
        EXPECT_EQ(live_gpcs.size(), 1u) << "gpc" << cluster_gpc;
        used.insert(*live_gpcs.begin());
    }
    EXPECT_EQ(used.size(), 8u);
    // The four TPCs the cluster method could not place (bits 75, 78, 81, 83: TPCs 62-65) sit with bits 0-3, in physical GPC 1.
    for (int bit : {75, 78, 81, 83}) EXPECT_EQ(find_tpc_by_bit(gpu, bit)->gpc, find_tpc_by_bit(gpu, 0)->gpc) << bit;
    for (int number : {62, 63, 64, 65}) EXPECT_EQ(find_tpc(gpu, number)->gpc, find_tpc(gpu, 0)->gpc) << number;

    EXPECT_EQ(gpu.gpcs.at(static_cast<std::size_t>(*find_tpc(gpu, 0)->gpc)).physical_id, 1);
}
