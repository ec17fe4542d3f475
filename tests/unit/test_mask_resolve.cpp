// Mask expressions resolved against the built-in H200 (66 real TPCs among 128 mask bits).
#include <gtest/gtest.h>

#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "model/user_error.hpp"
#include "snapshot/snapshot_file.hpp"
#include "../lib/thrown_message.hpp"

using namespace gpupart;

namespace {

const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

std::string list_of(const std::string& expression) { return resolve_mask(expression, h200()).mask.to_list(); }

std::string error_of(const std::string& expression, const Gpu& gpu = h200()) {
    return gpupart::test::thrown_message([&] { resolve_mask(expression, gpu); });
}

}  // namespace

// Numbers are TPC numbers, the driver's own: TPC k is SMs 2k and 2k+1, 0-65 on the H200 with no gaps.
TEST(MaskResolve, NumbersAreTheDriversTpcNumbers) {
    const ResolvedMask resolved = resolve_mask("33", h200());
    EXPECT_EQ(resolved.mask.to_list(), "33");
    EXPECT_EQ(sms_of(h200(), resolved.mask), (std::vector<int>{66, 67}));
    EXPECT_EQ(list_of("0-8"), "0-8");
    EXPECT_EQ(sms_of(h200(), resolve_mask("0-8", h200()).mask).size(), 18u);
    EXPECT_TRUE(resolve_mask("0-65", h200()).dropped_holes.empty());
    EXPECT_EQ(list_of("0-65"), list_of("all"));
}

TEST(MaskResolve, NumbersTheGpuLacksAreRefused) {
    EXPECT_EQ(error_of("70"), "mask '70': 70 names TPC 70, which NVIDIA H200 does not have (its TPCs are 0-65; TPC k is SMs 2k and 2k+1)");
    EXPECT_NE(error_of("60-70").find("names TPCs 66-70, which NVIDIA H200 does not have"), std::string::npos);
    EXPECT_NE(error_of("0xffffffffffffffffffffffffffffffff").find("TPCs 66-127"), std::string::npos);
    EXPECT_EQ(error_of("0x0"), "mask '0x0' selects no TPC at all");
}

// bits:0x... names launch-descriptor bits, for experts: translated through the GPU's map, holes dropped.
TEST(MaskResolve, DescriptorBitsAreTranslatedAndHolesDropped) {
    const ResolvedMask resolved = resolve_mask("bits:0x1ff", h200());  // bits 0-3 (SMs 0-1, 16-17, 32-33, 48-49), 4-8 holes
    EXPECT_EQ(resolved.mask.to_list(), "0,8,16,24");
    EXPECT_EQ(resolved.dropped_holes.to_list(), "4-8");
    ASSERT_EQ(resolved.notes.size(), 1u);
    EXPECT_EQ(resolved.notes[0], "dropped descriptor bits 4-8: no TPC there (holes)");
    EXPECT_EQ(list_of("bits:0x200"), "1");  // bit 9 holds SMs 2 and 3
    EXPECT_EQ(error_of("bits:0x1f0"), "mask 'bits:0x1f0' selects no real TPC on NVIDIA H200: descriptor bits 4-8 are holes");
    EXPECT_NE(error_of("bits:zz").find("bits: and a hex mask"), std::string::npos);
    EXPECT_EQ(list_of("bits:0xa48ffffdfeff7fbfdfe0f"), "0-65");
}

TEST(MaskResolve, HexAndListAgree) {
    EXPECT_EQ(resolve_mask("0xffff", h200()).mask, resolve_mask("0-15", h200()).mask);
    EXPECT_EQ(list_of("0x3ffffffffffffffff"), list_of("all"));
}

TEST(MaskResolve, GpcNamesSelectTheirTpcs) {
    EXPECT_EQ(list_of("gpc0"), "0,8,16,24,62-65");  // the driver's floorplan puts TPCs 62-65 (SMs 124-131) in physical GPC 1
    EXPECT_EQ(list_of("gpc1"), "1,9,17,25,32,39,46,53");
    EXPECT_EQ(list_of("gpc6-7"), "6-7,14-15,22-23,30-31,37-38,44-45,51-52,58-61");
    EXPECT_EQ(list_of("gpc1,62"), "1,9,17,25,32,39,46,53,62");
    EXPECT_TRUE(resolve_mask("gpc7", h200()).topology_notes.empty());
    // A GPU where some TPCs' GPC is not known (a probe without the RM floorplan) says so beside a GPC name.
    Gpu partly_known = h200();
    for (Tpc& tpc : partly_known.tpcs)
        if (tpc.mask_bit == 75 || tpc.mask_bit == 78 || tpc.mask_bit == 81 || tpc.mask_bit == 83) tpc.gpc.reset(), tpc.slot.reset();
    const ResolvedMask resolved = resolve_mask("gpc7", partly_known);
    EXPECT_TRUE(resolved.notes.empty());
    ASSERT_EQ(resolved.topology_notes.size(), 1u);
    EXPECT_NE(resolved.topology_notes[0].find("62-65 have no known GPC"), std::string::npos);
}

TEST(MaskResolve, UnknownGpcIsRefused) {
    EXPECT_EQ(error_of("gpc8"), "mask 'gpc8': gpc8 does not exist on NVIDIA H200 (gpc0-gpc7)");
    EXPECT_NE(error_of("gpc0-9").find("gpc9 does not exist"), std::string::npos);
}

TEST(MaskResolve, AllMeansEveryRealTpc) {
    const ResolvedMask resolved = resolve_mask("all", h200());
    EXPECT_EQ(resolved.mask.count(), 66);
    EXPECT_EQ(sms_of(h200(), resolved.mask).size(), 132u);
    EXPECT_TRUE(resolved.dropped_holes.empty());
}

TEST(MaskResolve, TpcCountsArePlacedGpcPacked) {
    EXPECT_EQ(list_of("4 tpcs"), "0,8,16,24");                  // half of the first 8-TPC GPC
    EXPECT_EQ(list_of("8 tpcs"), "0,8,16,24,62-65");            // the first GPC of exactly 8, not halves of two
    EXPECT_EQ(list_of("9 tpcs"), "6,14,22,30,37,44,51,58,60");  // the first GPC of 9
    EXPECT_EQ(list_of("3 tpcs"), "0,8,16");                     // the smallest GPC that holds 3
    EXPECT_EQ(list_of("12 tpcs"), "0,6,8,14,16,22,30,37,44,51,58,60");  // a whole 9-TPC GPC, then the best fit for 3
    EXPECT_EQ(list_of("66 tpcs"), list_of("all"));
    EXPECT_EQ(list_of("1 tpc"), "0");
}

TEST(MaskResolve, CountsBeyondTheGpuAreRefused) {
    EXPECT_EQ(error_of("67 tpcs"), "67 TPCs requested but only 66 are available on NVIDIA H200");
    EXPECT_EQ(error_of("9 gpcs"), "9 GPCs requested but only 8 have available TPCs on NVIDIA H200");
}

TEST(MaskResolve, GpcCountsTakeTheLargestGpcs) {
    EXPECT_EQ(list_of("2 gpcs"), "6-7,14-15,22-23,30-31,37-38,44-45,51-52,58-61");
    EXPECT_EQ(list_of("1 gpc"), "6,14,22,30,37,44,51,58,60");
    EXPECT_EQ(resolve_mask("8 gpcs", h200()).mask.count(), 66);  // every TPC: all have a known GPC
}

TEST(MaskResolve, SharesRoundToWholeTpcs) {
    EXPECT_EQ(resolve_mask("50%", h200()).mask.count(), 33);
    EXPECT_EQ(resolve_mask("100%", h200()).mask.count(), 66);
    EXPECT_EQ(resolve_mask("0.1%", h200()).mask.count(), 1);  // never rounds to nothing
    const ResolvedMask resolved = resolve_mask("25%", h200());
    EXPECT_EQ(resolved.mask.count(), 17);
    EXPECT_EQ(resolved.notes.at(0), "25% of 66 TPCs rounds to 17 TPCs, placed GPC-packed");
}

TEST(MaskResolve, BitsBeyondANarrowMaskAreRefused) {
    Gpu gpu;
    gpu.mask_width = 64;
    for (int bit = 0; bit < 4; ++bit) gpu.tpcs.push_back(Tpc{bit, std::nullopt, std::nullopt, {2 * bit, 2 * bit + 1}, {}, {}, {}});
    EXPECT_EQ(error_of("bits:0x4000000000000000f", gpu), "mask 'bits:0x4000000000000000f': bits 66 are beyond the 64-bit launch descriptor mask of GPU 0");
    EXPECT_NE(error_of("0-3,70", gpu).find("names TPC 70, which GPU 0 does not have (its TPCs are 0-3"), std::string::npos);
    EXPECT_EQ(resolve_mask("0-3", gpu).mask.count(), 4);
    EXPECT_EQ(resolve_mask("2 tpcs", gpu).mask.to_list(), "0-1");  // TPCs of no known GPC are still placeable
}

TEST(MaskResolve, GpuWithoutTpcMapRefusesEveryMask) {
    const Snapshot gtx = load_snapshot("builtin:gtx1060");
    EXPECT_EQ(error_of("0-3", gtx.gpus.at(0)),
              "mask '0-3': NVIDIA GeForce GTX 1060 3GB has no known TPC numbers (no source gave its TPCs' SMs), so no mask can be checked");
}
