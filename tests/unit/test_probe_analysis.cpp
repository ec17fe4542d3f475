// What a probe map says: real bits, holes, consistency, and each bit's GPC and TPC once joined with
// the driver's global SM order.
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "model/tpc_numbering.hpp"
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
    // The probe finds descriptor bits; the snapshot's TPC numbers are the same TPCs through its map.
    EXPECT_EQ(map.real_tpcs(), gpupart::TpcNumbering::of(gpu).to_bits(gpupart::real_tpcs(gpu)));
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

namespace {

// The bits of each logical GPC as a join on a GPU machine recorded them (a probe's --json fixture).
std::map<int, std::vector<int>> recorded_live_join(const std::string& fixture) {
    const auto json = nlohmann::json::parse(gpupart::test::fixture_text(fixture));
    std::map<int, std::vector<int>> by_gpc;
    for (const auto& [gpc, bits] : json.at("sm_order_join").at("bits_by_logical_gpc").items())
        by_gpc[std::stoi(gpc)] = bits.get<std::vector<int>>();
    return by_gpc;
}

std::set<int> as_set(const std::vector<int>& bits) { return {bits.begin(), bits.end()}; }

}  // namespace

// The H100's probe (recorded on the device) joined on CI with the H100 SM order recorded a day earlier
// through the RM controls: no conflict, and every bit in the GPC the live join on the device put it in.
// The TPC order inside logical GPC 1 differs from the live join's: the recording carries no GPU UUID
// and its SM order is not this GPU's (it numbers GPC 1's TPCs as on another chip), which is why
// gpupart joins only with the live SM order of the same GPU.
TEST(ProbeAnalysis, H100ProbeJoinedWithTheRecordedH100SmOrderKeepsTheLiveJoinsGpcs) {
    const gpupart::ProbeReport report = gpupart::parse_probe_report(gpupart::test::fixture_text("probe-h100/2026-11-23-probe-report.txt"));
    EXPECT_EQ(report.device.name, "NVIDIA H100 80GB HBM3");
    const gpupart::ProbeMap map = gpupart::analyse_probe(report);
    ASSERT_TRUE(map.consistent()) << map.problems.front();
    EXPECT_EQ(map.tpcs.size(), 66u);
    EXPECT_EQ(map.real_tpcs().to_list(), "0-3,9-16,18-25,27-34,36-43,45-52,54-71,75,78,81,83");
    const gpupart::ProbeJoin join = gpupart::join_with_sm_order(map, gpupart::test::h100_recorded_sm_order());
    EXPECT_TRUE(join.agrees()) << join.conflicts.front();
    const auto live = recorded_live_join("probe-h100/2026-11-23-probe.json");
    const auto recorded = join.bits_by_gpc();
    ASSERT_EQ(recorded.size(), live.size());
    for (const auto& [gpc, bits] : live) {
        EXPECT_EQ(as_set(recorded.at(gpc)), as_set(bits)) << "logical GPC " << gpc;
        EXPECT_EQ(recorded.at(gpc) == bits, gpc != 1) << "logical GPC " << gpc;
    }
    EXPECT_EQ(live.at(1), (std::vector<int>{0, 3, 81, 1, 75, 83, 2, 78}));
    EXPECT_EQ(recorded.at(1), (std::vector<int>{0, 3, 1, 75, 81, 2, 78, 83}));
}

// On the H200 the probe found, bit for bit, what the hand measurement of 2026-11-22 found.
TEST(ProbeAnalysis, H200ProbeOnTheDeviceEqualsTheHandMeasurement) {
    const gpupart::ProbeReport report = gpupart::parse_probe_report(gpupart::test::fixture_text("probe-h200/2026-11-23-probe-report.txt"));
    EXPECT_EQ(report.device.name, "NVIDIA H200");
    EXPECT_EQ(report.bit_sms, gpupart::test::h200_recorded_report().bit_sms);
}

// The H200's own SM order exists only through its live join. The recorded H100 order, joined with the
// H200 scan (the H100 and H200 scans are identical), puts every bit in the logical GPC the H200's own
// order puts it in; the TPC order inside GPCs 1, 3 and 6 differs, so no TPC index may be taken from
// another GPU's order.
TEST(ProbeAnalysis, H100SmOrderGroupsTheH200ScanIntoTheH200sOwnGpcs) {
    const gpupart::ProbeMap map = gpupart::analyse_probe(gpupart::test::h200_recorded_report());
    const gpupart::ProbeJoin join = gpupart::join_with_sm_order(map, gpupart::test::h100_recorded_sm_order());
    EXPECT_TRUE(join.agrees()) << join.conflicts.front();
    const auto live = recorded_live_join("probe-h200/2026-11-23-probe.json");
    const auto cross = join.bits_by_gpc();
    ASSERT_EQ(cross.size(), live.size());
    for (const auto& [gpc, bits] : live) {
        EXPECT_EQ(as_set(cross.at(gpc)), as_set(bits)) << "logical GPC " << gpc;
        EXPECT_EQ(cross.at(gpc) == bits, gpc != 1 && gpc != 3 && gpc != 6) << "logical GPC " << gpc;
    }
    EXPECT_EQ(live.at(1), (std::vector<int>{0, 3, 81, 1, 75, 2, 78, 83}));  // the H200's own order
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
