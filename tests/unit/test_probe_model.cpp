// A probe report laid onto the RM model: the recorded H200 scan joined with the recorded H100 RM replies
// (same GH100 chip, driver and SM numbering; ProbeAnalysis.JoinOfTheH200ScanWithTheH100SmOrderPlacesEveryBit
// shows the join agrees), and the ways a probe that does not fit is refused without changing the model.
#include <gtest/gtest.h>

#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "probe_fixtures.hpp"
#include "report/topology_text.hpp"
#include "rm_fixture_transport.hpp"
#include "sources/probe_model.hpp"
#include "sources/rm_gpu_builder.hpp"
#include "sources/rm_reader.hpp"

using namespace gpupart;

namespace {

struct RmModel {
    Gpu gpu;
    std::vector<SmOrderEntry> sm_order;
};

RmModel rm_model() {
    test::RmFixtureTransport transport(test::load_recorded_rm(std::string(GPUPART_FIXTURES) + "/h100-rmctrl", "nobody"));
    const RmReadResult read = read_rm_facts(transport, "0000:01:00.0", false);
    RmModel model;
    add_rm_facts(*read.facts, 1, model.gpu);
    model.sm_order = read.facts->sm_order.value->entries;
    return model;
}

const Tpc* tpc_with_bit(const Gpu& gpu, int bit) {
    for (const Tpc& tpc : gpu.tpcs)
        if (tpc.mask_bit == bit) return &tpc;
    return nullptr;
}

}  // namespace

TEST(ProbeModel, EveryTpcOfTheRmFloorplanGetsItsMaskBit) {
    RmModel model = rm_model();
    const SourceStatus status = apply_probe(test::h200_recorded_report(), model.sm_order, "cache.txt", model.gpu);
    EXPECT_EQ(status.state, SourceState::ok) << status.detail;
    EXPECT_EQ(status.source, Source::probe);
    EXPECT_TRUE(mask_bits_known(model.gpu));
    EXPECT_EQ(find_inconsistency(model.gpu), std::nullopt);
    EXPECT_EQ(real_tpcs(model.gpu).to_list(), "0-65");
    EXPECT_EQ(TpcNumbering::of(model.gpu).to_bits(real_tpcs(model.gpu)).to_list(), "0-3,9-16,18-25,27-34,36-43,45-52,54-71,75,78,81,83");
    EXPECT_EQ(model.gpu.holes.size(), 62u);
    EXPECT_EQ(model.gpu.descriptor_version.value, 0x40);
    // Bit 83 (SMs 130, 131), which the cluster method could not place: logical GPC 1, its TPC 7, the
    // last slot of physical GPC 1 (mask 0x1fd).
    const Tpc* tpc = tpc_with_bit(model.gpu, 83);
    ASSERT_NE(tpc, nullptr);
    EXPECT_EQ(tpc->sms, (std::vector<int>{130, 131}));
    EXPECT_EQ(model.gpu.gpcs.at(static_cast<std::size_t>(*tpc->gpc)).physical_id, 1);
    EXPECT_EQ(tpc->slot, 8);
    EXPECT_EQ(tpc->from.detail, "GR_GET_TPC_MASK; SMs from GR_GET_GLOBAL_SM_ORDER via GRMGR_GET_GR_FS_INFO; mask bit from the probe (cache.txt)");
    // Every GPC is whole now: gpc1 holds bits 0-3 and the four bits of no cluster group, which are TPCs
    // 0, 8, 16, 24 (SMs 0-1, 16-17, 32-33, 48-49) and 62-65 (SMs 124-131).
    EXPECT_EQ(gpc_tpcs(model.gpu, 1).to_list(), "0,8,16,24,62-65");
    EXPECT_EQ(TpcNumbering::of(model.gpu).to_bits(gpc_tpcs(model.gpu, 1)).to_list(), "0-3,75,78,81,83");
    EXPECT_TRUE(undetermined_gpc_tpcs(model.gpu).empty());
    const std::string text = topology_text(model.gpu);
    EXPECT_NE(text.find("gpc1      8   16   TPC        0       .      24       8      62      64      16      63      65\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("launch-descriptor bits: known for every TPC"), std::string::npos) << text;
}

TEST(ProbeModel, AProbeThatDisagreesChangesNothing) {
    RmModel model = rm_model();
    const Gpu before = model.gpu;
    ProbeReport swapped = test::h200_recorded_report();
    swapped.bit_sms[0] = {0, 16};   // SMs of two different TPCs
    swapped.bit_sms[1] = {1, 17};
    SourceStatus status = apply_probe(swapped, model.sm_order, "cache.txt", model.gpu);
    EXPECT_EQ(status.state, SourceState::failed);
    EXPECT_NE(status.detail.find("cache.txt disagrees with the driver's SM order: "), std::string::npos) << status.detail;
    EXPECT_EQ(status.detail.find('\n'), std::string::npos);
    EXPECT_EQ(model.gpu, before);

    ProbeReport short_of_sms = test::h200_recorded_report();
    short_of_sms.bit_sms[83] = {};
    status = apply_probe(short_of_sms, model.sm_order, "cache.txt", model.gpu);
    EXPECT_EQ(status.state, SourceState::failed);
    EXPECT_EQ(status.detail, "cache.txt: no mask bit drove SM(s) 130 131");
    EXPECT_EQ(model.gpu, before);
}

TEST(ProbeModel, WithoutADriverLayoutTheProbesTpcsStandAlone) {
    Gpu gpu;
    const SourceStatus status = apply_probe(test::h200_recorded_report(), {}, "cache.txt", gpu);
    EXPECT_EQ(status.state, SourceState::ok);
    EXPECT_EQ(gpu.tpcs.size(), 66u);
    EXPECT_EQ(sm_total(gpu), 132);
    EXPECT_EQ(undetermined_gpc_tpcs(gpu).count(), 66);
    EXPECT_EQ(find_inconsistency(gpu), std::nullopt);
}
