// What a probe map says: real bits, holes, consistency, and each bit's GPC and TPC once joined with
// the driver's global SM order.
#include <gtest/gtest.h>

#include "model/gpu_queries.hpp"
#include "probe_fixtures.hpp"
#include "snapshot/snapshot_file.hpp"
#include "sources/probe_analysis.hpp"

using gpupart::SmOrderEntry;

TEST(ProbeAnalysis, RecordedH200Has66TpcsAnd62Holes) {
    const gpupart::ProbeMap map = gpupart::analyse_probe(gpupart::test::h200_recorded_report());
    EXPECT_TRUE(map.consistent()) << map.problems.front();
    EXPECT_EQ(map.tpcs.size(), 66u);
    EXPECT_EQ(map.holes.size(), 62u);
    EXPECT_EQ(map.real_tpcs().to_list(), "0-3,9-16,18-25,27-34,36-43,45-52,54-71,75,78,81,83");
    const std::vector<std::pair<int, std::vector<int>>> last = {{75, {124, 125}}, {78, {126, 127}}, {81, {128, 129}}, {83, {130, 131}}};
    for (const auto& [bit, sms] : last) {
        const auto it = std::find_if(map.tpcs.begin(), map.tpcs.end(), [&](const gpupart::ProbeBit& b) { return b.mask_bit == bit; });
        ASSERT_NE(it, map.tpcs.end()) << bit;
        EXPECT_EQ(it->sms, sms) << bit;
    }
}

TEST(ProbeAnalysis, AgreesWithTheBuiltInH200Snapshot) {
    const gpupart::ProbeMap map = gpupart::analyse_probe(gpupart::test::h200_recorded_report());
    const gpupart::Gpu gpu = gpupart::load_snapshot("builtin:h200").gpus.at(0);
    EXPECT_EQ(map.real_tpcs(), gpupart::real_tpcs(gpu));
    ASSERT_EQ(map.tpcs.size(), gpu.tpcs.size());
    for (std::size_t i = 0; i < map.tpcs.size(); ++i) {
        EXPECT_EQ(map.tpcs[i].mask_bit, gpu.tpcs[i].mask_bit);
        EXPECT_EQ(map.tpcs[i].sms, gpu.tpcs[i].sms);
    }
}

TEST(ProbeAnalysis, ReportsSmsDrivenTwiceOrNotAtAll) {
    gpupart::ProbeReport report = gpupart::test::h200_recorded_report();
    report.bit_sms[4] = {16, 17};  // bit 1's SMs again
    report.bit_sms[83] = {};       // SMs 130, 131 now driven by nothing
    report.bit_sms[84] = {140};
    const gpupart::ProbeMap map = gpupart::analyse_probe(report);
    ASSERT_EQ(map.problems.size(), 4u);
    EXPECT_EQ(map.problems[0], "SM 16 was driven by bit 1 and by bit 4");
    EXPECT_EQ(map.problems[1], "SM 17 was driven by bit 1 and by bit 4");
    EXPECT_EQ(map.problems[2], "bit 84 drove SM 140, but the GPU has SMs 0-131");
    EXPECT_EQ(map.problems[3], "no mask bit drove SM(s) 130 131");
}

// The H200's own SM order was not recorded; the H100's was (same GH100 chip, same driver, and the same
// TPC count per logical GPC: 9, 8, 8, 8, 8, 8, 8, 9). Joined with the H200 scan it places every bit
// without a conflict, which is what the live join on one GPU must do too.
TEST(ProbeAnalysis, JoinOfTheH200ScanWithTheH100SmOrderPlacesEveryBit) {
    const gpupart::ProbeMap map = gpupart::analyse_probe(gpupart::test::h200_recorded_report());
    const std::vector<SmOrderEntry> order = gpupart::test::h100_recorded_sm_order();
    ASSERT_EQ(order.size(), 132u);
    const gpupart::ProbeJoin join = gpupart::join_with_sm_order(map, order);
    EXPECT_TRUE(join.agrees()) << join.conflicts.front();
    ASSERT_EQ(join.bits.size(), 66u);
    const auto by_gpc = join.bits_by_gpc();
    ASSERT_EQ(by_gpc.size(), 8u);
    EXPECT_EQ(by_gpc.at(0), (std::vector<int>{54, 57, 60, 55, 58, 61, 56, 59, 62}));
    // The four bits the cluster method could not place belong to logical GPC 1, with bits 0-3.
    EXPECT_EQ(by_gpc.at(1), (std::vector<int>{0, 3, 1, 75, 81, 2, 78, 83}));
    EXPECT_EQ(by_gpc.at(7).size(), 9u);
    for (const gpupart::BitPlacement& placed : join.bits)
        if (placed.mask_bit == 83) {
            EXPECT_EQ(placed.logical_gpc, 1);
            EXPECT_EQ(placed.local_tpc, 7);
            EXPECT_EQ(placed.global_tpc, 65);
        }
}

TEST(ProbeAnalysis, JoinNamesEveryDisagreement) {
    gpupart::ProbeMap map;
    map.tpcs = {{0, {0, 1}}, {1, {2, 3}}, {2, {4}}, {3, {5, 6}}, {4, {7}}};
    const std::vector<SmOrderEntry> order = {
        {0, 0, 0, 0, 0}, {1, 0, 0, 0, 0},                    // TPC 0: bit 0
        {2, 0, 1, 1, 0}, {3, 1, 0, 2, 0},                    // bit 1's SMs sit in TPCs 1 and 2
        {4, 1, 1, 3, 0}, {5, 1, 1, 3, 0}, {6, 1, 1, 3, 0},  // bits 2 and 3 both land in TPC 3
        {8, 2, 0, 4, 0},                                     // SM 7 (bit 4) is missing; TPC 4 has no bit
    };
    const gpupart::ProbeJoin join = gpupart::join_with_sm_order(map, order);
    ASSERT_EQ(join.conflicts.size(), 4u);
    EXPECT_EQ(join.conflicts[0], "bit 1: SMs 2 3 belong to 2 different TPCs in the SM order");
    EXPECT_EQ(join.conflicts[1], "bits 2 and 3 both drive global TPC 3");
    EXPECT_EQ(join.conflicts[2], "bit 4: SM(s) 7 are not in the SM order");
    EXPECT_EQ(join.conflicts[3], "global TPC(s) 1 2 4 of the SM order are driven by no mask bit");
    EXPECT_EQ(join.bits[0].logical_gpc, 0);
    EXPECT_FALSE(join.bits[1].logical_gpc.has_value());
    EXPECT_EQ(join.bits[1].note, "its SMs belong to different TPCs in the SM order");
    EXPECT_EQ(join.bits[4].note, "SM(s) 7 are not in the SM order");
}
