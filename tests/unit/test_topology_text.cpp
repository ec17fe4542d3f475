#include <gtest/gtest.h>

#include "report/topology_text.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {
const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}
}  // namespace

TEST(TopologyText, SummaryHasTheMeasuredCounts) {
    EXPECT_EQ(topology_summary(h200()), "66 TPCs, 132 SMs, 8 GPCs, 62 holes in the 128-bit TPC mask");
    Gpu partly_known = h200();
    for (Tpc& tpc : partly_known.tpcs)
        if (tpc.mask_bit >= 75) tpc.gpc.reset(), tpc.slot.reset();
    EXPECT_EQ(topology_summary(partly_known),
              "66 TPCs, 132 SMs, 8 GPCs (+4 TPCs of undetermined GPC), 62 holes in the 128-bit TPC mask");
}

TEST(TopologyText, FloorplanRowsShowTpcNumbersSmsAndHoles) {
    const std::string text = topology_text(h200());
    // gpc0 (physical GPC 1): 8 TPCs in the driver's slot order, its floorswept slot 6 a hole.
    // Each TPC by its number, k for SMs 2k and 2k+1 (bits 0, 3, 81, 1, 75, 83, 2, 78 of the launch descriptor).
    EXPECT_NE(text.find("gpc0      8   16   TPC        0      24      64       8      62      65       .      16      63\n"
                        "                   SMs      0-1   48-49 128-129   16-17 124-125 130-131       .   32-33 126-127\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("gpc7      9   18   TPC        7      31      52      15      38      59      23      45      61\n"),
              std::string::npos);
    EXPECT_EQ(text.find("no GPC"), std::string::npos) << text;
    EXPECT_NE(text.find("gpc0 = physical 1 / logical 1"), std::string::npos) << text;
    EXPECT_NE(text.find("source: recorded: tests/fixtures/live-h200/live-h200.json (rmctrl: GR_GET_TPC_MASK"), std::string::npos) << text;
    EXPECT_NE(text.find("62 of 128 bits are holes: 4-8,17,26,35,44,53,72-74,76-77,79-80,82,84-127"), std::string::npos) << text;
    Gpu partly_known = h200();
    for (Tpc& tpc : partly_known.tpcs)
        if (tpc.mask_bit >= 75) tpc.gpc.reset(), tpc.slot.reset();
    EXPECT_NE(topology_text(partly_known).find("no GPC    4    8   TPC       62      63      64      65\n"
                                               "                   SMs  124-125 126-127 128-129 130-131\n"),
              std::string::npos);
}

TEST(TopologyText, EnginesRunlistsAndSharedCopyEngines) {
    const std::string text = topology_text(h200());
    EXPECT_NE(text.find("runlist 0    GR0, COPY0 (GRCE), COPY1 (GRCE)"), std::string::npos) << text;
    EXPECT_NE(text.find("runlist 10   COPY4"), std::string::npos);
    EXPECT_NE(text.find("LCE4                PCEs 0-11"), std::string::npos) << text;
    EXPECT_NE(text.find("LCE0 and LCE2 share PCEs 12,14: their copies interfere (Bakita & Anderson, RTAS 2024, rule R8)"), std::string::npos);
    EXPECT_NE(text.find("LCE1 and LCE3 share PCEs 13,15"), std::string::npos);
}

TEST(TopologyText, SharedCopyEnginesAreOnlyRealOverlaps) {
    EXPECT_EQ(shared_copy_engine_lines(h200()).size(), 2u);
    Gpu gpu;
    gpu.copy_engines.lces = {LogicalCopyEngine{0, 0x1, true, false, "", {}}, LogicalCopyEngine{1, 0x2, true, false, "", {}}};
    EXPECT_TRUE(shared_copy_engine_lines(gpu).empty());
}

TEST(TopologyText, GpuWithoutTpcMapSaysSo) {
    const Snapshot ada = load_snapshot("builtin:rtx6000ada");
    const std::string text = topology_text(ada.gpus.at(0));
    EXPECT_NE(text.find("TPC layout: not known for this GPU"), std::string::npos);
    EXPECT_NE(text.find("runlist 7    (no engine named)"), std::string::npos) << text;
    EXPECT_NE(text.find("runlist 16   SEQ"), std::string::npos);
}
