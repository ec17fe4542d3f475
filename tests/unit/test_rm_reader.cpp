// The RM-control reader end to end against the recorded H100 replies (tests/fixtures/h100-rmctrl),
// replayed by RmFixtureTransport: the real reader, decoders and model builder, no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "model/user_error.hpp"
#include "report/topology_text.hpp"
#include "snapshot/snapshot_file.hpp"
#include "rm_fixture_transport.hpp"
#include "sources/rm_gpu_builder.hpp"
#include "sources/rm_reader.hpp"

using namespace gpupart;
using gpupart::test::RmFixtureTransport;

namespace {

const std::string kFixtures = std::string(GPUPART_FIXTURES) + "/h100-rmctrl";
const std::string kBus = "0000:01:00.0";

struct Read {
    RmReadResult result;
    Gpu gpu;
};

Read read_as(const std::string& who, int own_pid = 1, test::FixtureFaults faults = {}) {
    RmFixtureTransport transport(test::load_recorded_rm(kFixtures, who), std::move(faults));
    Read read{read_rm_facts(transport, kBus, who == "root"), {}};
    if (read.result.facts) add_rm_facts(*read.result.facts, own_pid, read.gpu);
    return read;
}

const Read& nobody() {
    static const Read read = read_as("nobody");
    return read;
}

const Read& root() {
    static const Read read = read_as("root");
    return read;
}

// The physical TPC mask each GPC row of the model shows: its TPCs' slots as bits.
std::map<int, std::uint32_t> tpc_masks_by_physical_gpc(const Gpu& gpu) {
    std::map<int, std::uint32_t> masks;
    for (const Gpc& gpc : gpu.gpcs) masks[*gpc.physical_id] = 0;
    for (const Tpc& tpc : gpu.tpcs) masks[*gpu.gpcs.at(static_cast<std::size_t>(*tpc.gpc)).physical_id] |= 1u << *tpc.slot;
    return masks;
}

const Tpc& tpc_at(const Gpu& gpu, int physical_gpc, int slot) {
    for (const Tpc& tpc : gpu.tpcs)
        if (gpu.gpcs.at(static_cast<std::size_t>(*tpc.gpc)).physical_id == physical_gpc && tpc.slot == slot) return tpc;
    throw std::runtime_error("no TPC at that slot");
}

const Engine& engine(const Gpu& gpu, const std::string& name) {
    for (const Engine& e : gpu.engines)
        if (e.name == name) return e;
    throw std::runtime_error("no engine " + name);
}

}  // namespace

TEST(RmReader, ReadsTheRecordedH100AsNobody) {
    const Read& read = nobody();
    EXPECT_EQ(read.result.status.state, SourceState::ok) << read.result.status.detail;
    EXPECT_EQ(read.result.status.source, Source::rmctrl);
    EXPECT_NE(read.result.status.detail.find("driver 580.159.04"), std::string::npos) << read.result.status.detail;
    EXPECT_NE(read.result.status.detail.find("need root"), std::string::npos) << read.result.status.detail;
    ASSERT_TRUE(read.result.facts);
    EXPECT_EQ(read.result.facts->gpc_mask.value, 0xffu);
}

TEST(RmReader, ModelHasEightGpcsSixtySixTpcsAndAHundredThirtyTwoSms) {
    const Gpu& gpu = nobody().gpu;
    EXPECT_EQ(find_inconsistency(gpu), std::nullopt);
    EXPECT_EQ(gpu.gpcs.size(), 8u);
    EXPECT_EQ(gpu.tpcs.size(), 66u);
    EXPECT_EQ(sm_total(gpu), 132);
    EXPECT_EQ(gpu.sm_count.value, 132);
    for (const Gpc& gpc : gpu.gpcs) EXPECT_EQ(gpc.tpc_slots, 9) << gpc.index;  // LITTER_NUM_TPC_PER_GPC
    for (const Tpc& tpc : gpu.tpcs) EXPECT_EQ(tpc.sms.size(), 2u) << tpc.from.detail;
    EXPECT_EQ(gpu.compute_capability.value, "9.0");
    EXPECT_EQ(gpu.architecture.value, "Hopper");
    EXPECT_EQ(gpu.mask_width, 128);
    EXPECT_EQ(gpu.mig_enabled.value, false);
    EXPECT_EQ(gpu.driver_version.value, "580.159.04");
    EXPECT_EQ(gpu.pci_bus_id.value, kBus);
}

TEST(RmReader, TpcMasksPerPhysicalGpcAreTheRecordedOnesWithFloorsweptSlotsEmpty) {
    const std::map<int, std::uint32_t> recorded = {{0, 0x1ff}, {1, 0x1fd}, {2, 0x1bf}, {3, 0x1bf},
                                                   {4, 0x1bf}, {5, 0x1ff}, {6, 0x1bf}, {7, 0x1bf}};
    EXPECT_EQ(tpc_masks_by_physical_gpc(nobody().gpu), recorded);
}

TEST(RmReader, LogicalGpcsMapToPhysicalOnesAsGrfsSays) {
    // GRMGR_GET_GR_FS_INFO: logical 5 -> physical 6, 6 -> 7, 7 -> 5; the rest identical.
    const std::map<int, int> recorded = {{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 6}, {6, 7}, {7, 5}};
    std::map<int, int> model;
    for (const Gpc& gpc : nobody().gpu.gpcs) model[*gpc.logical_id] = *gpc.physical_id;
    EXPECT_EQ(model, recorded);
}

TEST(RmReader, SmsSitInTheTpcTheSmOrderNames) {
    const Gpu& gpu = nobody().gpu;
    // sm 0/1: logical GPC 1, TPC 0 -> physical GPC 1, slot 0.
    EXPECT_EQ(tpc_at(gpu, 1, 0).sms, (std::vector<int>{0, 1}));
    // sm 48/49: logical GPC 1, TPC 1 -> the second TPC of mask 0x1fd, slot 2 (slot 1 is floorswept).
    EXPECT_EQ(tpc_at(gpu, 1, 2).sms, (std::vector<int>{48, 49}));
    // sm 124/125: logical GPC 1, TPC 3 -> slot 4.
    EXPECT_EQ(tpc_at(gpu, 1, 4).sms, (std::vector<int>{124, 125}));
    // sm 8/9: logical GPC 5, TPC 0 -> physical GPC 6, slot 0; sm 10/11: logical 6 -> physical 7.
    EXPECT_EQ(tpc_at(gpu, 6, 0).sms, (std::vector<int>{8, 9}));
    EXPECT_EQ(tpc_at(gpu, 7, 0).sms, (std::vector<int>{10, 11}));
    // sm 120/121: logical GPC 0, TPC 8 -> physical GPC 0, slot 8 (all nine present).
    EXPECT_EQ(tpc_at(gpu, 0, 8).sms, (std::vector<int>{120, 121}));
}

TEST(RmReader, MaskBitsAreUnknownAndSayRunTheProbe) {
    const Gpu& gpu = nobody().gpu;
    EXPECT_FALSE(mask_bits_known(gpu));
    // The TPC numbers come from the SMs (TPC k = SMs 2k and 2k+1), so they are known without the probe;
    // which descriptor bit each one is is not, so no map to apply masks with.
    EXPECT_EQ(real_tpcs(gpu).to_list(), "0-65");
    EXPECT_FALSE(TpcNumbering::try_of(gpu).has_value());
    EXPECT_TRUE(gpu.holes.empty());
    for (const Tpc& tpc : gpu.tpcs) {
        EXPECT_FALSE(tpc.mask_bit);
        EXPECT_NE(tpc.mask_bit_note.find("run `gpupart probe`"), std::string::npos);
    }
    EXPECT_EQ(topology_summary(gpu), "66 TPCs, 132 SMs, 8 GPCs, TPC mask bits not known");
    EXPECT_FALSE(gpu.descriptor_version.known());
}

TEST(RmReader, CopyEnginesShowGrceSharingLive) {
    const Gpu& gpu = nobody().gpu;
    ASSERT_EQ(gpu.copy_engines.lces.size(), 5u);
    EXPECT_TRUE(gpu.copy_engines.lces[0].grce && gpu.copy_engines.lces[0].shared);
    EXPECT_TRUE(gpu.copy_engines.lces[1].grce && gpu.copy_engines.lces[1].shared);
    EXPECT_TRUE(!gpu.copy_engines.lces[2].grce && gpu.copy_engines.lces[2].shared);
    EXPECT_EQ(gpu.copy_engines.lces[4].pce_mask, 0xfffu);
    EXPECT_EQ(gpu.copy_engines.lces[0].caps_hex, "e303");
    const auto shared = shared_copy_engines(gpu);
    ASSERT_EQ(shared.size(), 2u);
    EXPECT_EQ(shared[0].lce_a, 0);
    EXPECT_EQ(shared[0].lce_b, 2);
    EXPECT_EQ(shared[0].pce_list(), "12,14");
    EXPECT_EQ(shared[1].lce_a, 1);
    EXPECT_EQ(shared[1].lce_b, 3);
    EXPECT_EQ(shared[1].pce_list(), "13,15");
    EXPECT_EQ(gpu.copy_engines.pce_count.value, 16);
    EXPECT_EQ(gpu.copy_engines.lces[0].from.source, Source::rmctrl);
}

TEST(RmReader, AsNobodyRunlistsSayNeedsRoot) {
    const Gpu& gpu = nobody().gpu;
    ASSERT_EQ(gpu.engines.size(), 23u);
    for (const Engine& e : gpu.engines) {
        EXPECT_FALSE(e.runlist.known()) << e.name;
        EXPECT_EQ(e.runlist.unknown_reason, "needs root") << e.name;
    }
    EXPECT_TRUE(gpu.runlists.empty());
    EXPECT_EQ(engine(gpu, "OFA0").kind, EngineKind::optical_flow);
    EXPECT_EQ(gpu.fifo.max_channel_groups.value, 2048);
    EXPECT_EQ(gpu.fifo.max_channels_per_group.value, 128);
    EXPECT_EQ(gpu.fifo.channel_groups_in_use.value, 3);
    // No root-only control was even asked.
    RmFixtureTransport transport(test::load_recorded_rm(kFixtures, "nobody"));
    read_rm_facts(transport, kBus, false);
    for (std::uint32_t cmd : transport.controls()) {
        EXPECT_NE(cmd, 0x20800179u);
        EXPECT_NE(cmd, 0x20801119u);
    }
}

TEST(RmReader, AsRootRunlistsAndChannelsAreRead) {
    const Gpu& gpu = root().gpu;
    EXPECT_EQ(root().result.status.state, SourceState::ok);
    EXPECT_EQ(engine(gpu, "GR0").runlist.value, 0);
    EXPECT_EQ(engine(gpu, "COPY0").runlist.value, 0);
    EXPECT_EQ(engine(gpu, "COPY1").runlist.value, 0);
    EXPECT_EQ(engine(gpu, "COPY2").runlist.value, 1);
    EXPECT_EQ(engine(gpu, "COPY3").runlist.value, 3);
    EXPECT_EQ(engine(gpu, "COPY4").runlist.value, 10);
    ASSERT_FALSE(gpu.runlists.empty());
    EXPECT_EQ(gpu.runlists[0].id, 0);
    EXPECT_EQ(gpu.runlists[0].channel_ids, (std::vector<int>{1, 2, 3}));  // bitMask[0] = 0xe
    EXPECT_EQ(find_inconsistency(gpu), std::nullopt);
}

TEST(RmReader, TsgsPerRunlistOnlyWhereTheDriverCountsThemPerRunlist) {
    // The recording never asked whether channel RAM is per runlist: then no per-runlist count is shown.
    EXPECT_FALSE(engine(nobody().gpu, "GR0").tsgs_in_use.known());
    EXPECT_EQ(engine(nobody().gpu, "GR0").tsgs_in_use.unknown_reason, "FIFO_GET_INFO: NV_ERR_NOT_SUPPORTED (0x56)");
    // One channel RAM for all runlists (as on the live H100): the per-engine count would be the GPU's.
    test::FixtureFaults shared;
    shared.per_runlist_channel_ram = 0;
    const Gpu one_ram = read_as("root", 1, shared).gpu;
    for (const Engine& e : one_ram.engines) {
        EXPECT_FALSE(e.tsgs_in_use.known()) << e.name;
        EXPECT_EQ(e.tsgs_in_use.unknown_reason, "the driver counts TSGs for the whole GPU only (one channel RAM for all runlists)");
    }
    EXPECT_FALSE(one_ram.runlists.at(0).tsg_count.known());
    EXPECT_EQ(one_ram.fifo.channel_groups_in_use.value, 3);
    // Per-runlist channel RAM: the recorded count of GR0's runlist.
    test::FixtureFaults per_runlist;
    per_runlist.per_runlist_channel_ram = 1;
    const Gpu per_ram = read_as("root", 1, per_runlist).gpu;
    EXPECT_EQ(engine(per_ram, "GR0").tsgs_in_use.value, 3);
    EXPECT_EQ(per_ram.runlists.at(0).tsg_count.value, 3);
    EXPECT_FALSE(engine(per_ram, "SW").tsgs_in_use.known());  // no runlist, never asked
}

TEST(RmReader, ProcessesComeFromGpuGetPidsLeavingOutGpupartItself) {
    EXPECT_EQ(nobody().gpu.processes.size(), 1u);
    EXPECT_EQ(nobody().gpu.processes.at(0).pid, 534);  // the recording program, as the driver listed it
    EXPECT_TRUE(read_as("nobody", 534).gpu.processes.empty());
}

TEST(RmReader, AsksTheDriverVersionFirstAndFreesItsClient) {
    RmFixtureTransport transport(test::load_recorded_rm(kFixtures, "nobody"));
    read_rm_facts(transport, kBus, false);
    ASSERT_FALSE(transport.escapes().empty());
    EXPECT_EQ(transport.escapes().front(), 210);  // NV_ESC_CHECK_VERSION_STR
    EXPECT_TRUE(transport.client_freed());
}

TEST(RmReader, TopologyTextShowsPhysicalRowsWithFloorsweptSlots) {
    const std::string text = topology_text(nobody().gpu);
    // Physical GPC 1 (mask 0x1fd): slot 1 is floorswept.
    EXPECT_NE(text.find("gpc1      8   16   TPC        0       .      24       8      62      64      16      63      65\n"
                        "                   SMs      0-1       .   48-49   16-17 124-125 128-129   32-33 126-127 130-131\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("launch-descriptor bits: not known (run `gpupart probe`"), std::string::npos) << text;
    EXPECT_NE(text.find("gpc5 = physical 5 / logical 7"), std::string::npos) << text;
    EXPECT_NE(text.find("runlist ?    GR0, COPY0 (GRCE), COPY1 (GRCE), COPY2"), std::string::npos) << text;
    EXPECT_NE(text.find("LCE0 and LCE2 share PCEs 12,14"), std::string::npos);
}

TEST(RmReader, TheModelRoundTripsThroughTheSnapshotFormat) {
    const Snapshot snapshot{"2026-11-22", "RM replay", {nobody().gpu}};
    EXPECT_EQ(parse_snapshot_text(snapshot_text(snapshot), "rm.json"), snapshot);
    auto refused = [&](Gpu gpu) {
        try {
            parse_snapshot_text(snapshot_text(Snapshot{"x", "x", {gpu}}), "rm.json");
        } catch (const UserError& error) {
            return std::string(error.what());
        }
        return std::string("no error");
    };
    Gpu bit_after_unknown = nobody().gpu;
    bit_after_unknown.tpcs.back().mask_bit = 3;
    EXPECT_EQ(refused(bit_after_unknown),
              "snapshot rm.json: field gpus[0]: tpcs[65].mask_bit: TPCs with a mask bit must come before those without");
    Gpu no_place = nobody().gpu;
    no_place.tpcs[0].slot.reset();
    EXPECT_EQ(refused(no_place), "snapshot rm.json: field gpus[0]: tpcs[0]: a TPC with no mask bit needs its gpc and slot");
    Gpu unsorted = nobody().gpu;
    std::swap(unsorted.tpcs[0], unsorted.tpcs[1]);
    EXPECT_EQ(refused(unsorted), "snapshot rm.json: field gpus[0]: tpcs[1]: TPCs with no mask bit must be sorted by gpc and slot");
}
