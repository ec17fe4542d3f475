// Mask expressions resolved against the built-in H200 (66 real TPCs among 128 mask bits).
#include <gtest/gtest.h>

#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "model/user_error.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

std::string list_of(const std::string& expression) { return resolve_mask(expression, h200()).mask.to_list(); }

std::string error_of(const std::string& expression, const Gpu& gpu = h200()) {
    try {
        resolve_mask(expression, gpu);
    } catch (const UserError& error) {
        return error.what();
    }
    return "no error";
}

}  // namespace

TEST(MaskResolve, ExplicitBitsKeepRealTpcsAndReportDroppedHoles) {
    const ResolvedMask resolved = resolve_mask("0-8", h200());
    EXPECT_EQ(resolved.mask.to_list(), "0-3");
    EXPECT_EQ(resolved.dropped_holes.to_list(), "4-8");
    ASSERT_EQ(resolved.notes.size(), 1u);
    EXPECT_EQ(resolved.notes[0], "dropped bits 4-8: no TPC there (holes)");
}

TEST(MaskResolve, MaskOfOnlyHolesIsRefused) {
    EXPECT_EQ(error_of("4-8"), "mask '4-8' selects no real TPC on NVIDIA H200: bits 4-8 are holes");
    EXPECT_NE(error_of("72-74,76,77,79,80,82").find("selects no real TPC"), std::string::npos);
    EXPECT_NE(error_of("0x1f0").find("bits 4-8 are holes"), std::string::npos);
    EXPECT_NE(error_of("84-127").find("selects no real TPC"), std::string::npos);
    EXPECT_EQ(error_of("0x0"), "mask '0x0' selects no TPC at all");
}

TEST(MaskResolve, HexAndListAgree) {
    EXPECT_EQ(resolve_mask("0xffff", h200()).mask, resolve_mask("0-15", h200()).mask);
    EXPECT_EQ(list_of("0xffffffffffffffffffffffffffffffff"), list_of("all"));
}

TEST(MaskResolve, GpcNamesSelectTheirTpcs) {
    EXPECT_EQ(list_of("gpc0"), "0-3,75,78,81,83");  // the driver's floorplan puts bits 75-83 in physical GPC 1
    EXPECT_EQ(list_of("gpc1"), "9-16");
    EXPECT_EQ(list_of("gpc6-7"), "54-71");
    EXPECT_EQ(list_of("gpc1,75"), "9-16,75");
    EXPECT_TRUE(resolve_mask("gpc7", h200()).topology_notes.empty());
    // A GPU where some TPCs' GPC is not known (a probe without the RM floorplan) says so beside a GPC name.
    Gpu partly_known = h200();
    for (Tpc& tpc : partly_known.tpcs)
        if (tpc.mask_bit == 75 || tpc.mask_bit == 78 || tpc.mask_bit == 81 || tpc.mask_bit == 83) tpc.gpc.reset(), tpc.slot.reset();
    const ResolvedMask resolved = resolve_mask("gpc7", partly_known);
    EXPECT_TRUE(resolved.notes.empty());
    ASSERT_EQ(resolved.topology_notes.size(), 1u);
    EXPECT_NE(resolved.topology_notes[0].find("75,78,81,83 have no known GPC"), std::string::npos);
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
    EXPECT_EQ(list_of("4 tpcs"), "0-3");        // half of the first 8-TPC GPC, lowest mask bits first
    EXPECT_EQ(list_of("8 tpcs"), "0-3,75,78,81,83");  // the first GPC of exactly 8, not halves of two
    EXPECT_EQ(list_of("9 tpcs"), "54-62");      // the first GPC of 9
    EXPECT_EQ(list_of("3 tpcs"), "0-2");        // the smallest GPC that holds 3
    EXPECT_EQ(list_of("12 tpcs"), "0-2,54-62"); // a whole 9-TPC GPC, then the best fit for 3
    EXPECT_EQ(list_of("66 tpcs"), list_of("all"));
    EXPECT_EQ(list_of("1 tpc"), "0");
}

TEST(MaskResolve, CountsBeyondTheGpuAreRefused) {
    EXPECT_EQ(error_of("67 tpcs"), "67 TPCs requested but only 66 are available on NVIDIA H200");
    EXPECT_EQ(error_of("9 gpcs"), "9 GPCs requested but only 8 have available TPCs on NVIDIA H200");
}

TEST(MaskResolve, GpcCountsTakeTheLargestGpcs) {
    EXPECT_EQ(list_of("2 gpcs"), "54-71");
    EXPECT_EQ(list_of("1 gpc"), "54-62");
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
    EXPECT_EQ(error_of("0-3,70", gpu), "mask '0-3,70': bits 70 are beyond the 64-bit TPC mask of GPU 0");
    EXPECT_EQ(resolve_mask("0-3", gpu).mask.count(), 4);
    EXPECT_EQ(resolve_mask("2 tpcs", gpu).mask.to_list(), "0-1");  // TPCs of no known GPC are still placeable
}

TEST(MaskResolve, GpuWithoutTpcMapRefusesEveryMask) {
    const Snapshot gtx = load_snapshot("builtin:gtx1060");
    EXPECT_EQ(error_of("0-3", gtx.gpus.at(0)),
              "mask '0-3': NVIDIA GeForce GTX 1060 3GB has no known TPC map, so no mask can be checked");
}
