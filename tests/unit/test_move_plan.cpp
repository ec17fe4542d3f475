// Which TPC + and - move, on the built-in H200 (the plans themselves are tested with real processes in
// tests/registry/test_move_plan.cpp).
#include <gtest/gtest.h>

#include "controller/move_plan.hpp"
#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

TpcMask tpcs(const char* expression) { return resolve_mask(expression, h200()).mask; }

}  // namespace

// Masks are TPC numbers; the comments say the H200's GPCs (gpc1 = 1,9,17,25,32,39,46,53, gpc2 = 2,10,18,26,33,40,47,54,
// gpc3 = 3,11,19,27,34,41,48,55, gpc0 = 0,8,16,24,62-65).
TEST(MovePlan, GrowingFillsTheGpcTheProcessUsesMost) {
    // Holds half of gpc1 (1,9,17,25) and 2 (gpc2): the free TPCs of gpc1 come first.
    EXPECT_EQ(tpc_to_add(h200(), tpcs("1,9,17,25,2"), tpcs("32,39,46,53,10,18,26,33,40,47,54")), 32);
    // Its GPCs are full: a wholly free GPC (gpc3), not gpc0's free 0 and 8, which another process's 16 and 24
    // would then share with it.
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), tpcs("0,8,gpc3")), 3);
    EXPECT_NE(choose_tpc_to_add(h200(), tpcs("gpc1"), tpcs("0,8,gpc3"))->why.find("gpc3, which is wholly free"), std::string::npos);
    // No GPC wholly free: the best fit among the rest, and the reason says it shares a GPC.
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), tpcs("0,8,3,11,19,27")), 0);
    EXPECT_NE(choose_tpc_to_add(h200(), tpcs("gpc1"), tpcs("0,8,3,11,19,27"))->why.find("another process also uses"), std::string::npos);
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), TpcMask{}), std::nullopt);
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), TpcMask::range(66, 70)), std::nullopt);  // numbers the H200 lacks
}

TEST(MovePlan, ShrinkingTakesFromTheGpcTheProcessUsesLeast) {
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("gpc1,2")), 2);
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("gpc1-2")), 54);  // a tie: the higher GPC's highest TPC
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("gpc6,62")), 62);     // 62 is gpc0's: the GPC it uses least
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("gpc1,2,62")), 2);  // a tie of gpc0 and gpc2: the higher GPC's
    // Where a source gave some TPCs no GPC, those go first.
    Gpu partly_known = h200();
    for (Tpc& tpc : partly_known.tpcs)
        if (tpc.mask_bit == 75 || tpc.mask_bit == 78 || tpc.mask_bit == 81 || tpc.mask_bit == 83) tpc.gpc.reset(), tpc.slot.reset();
    EXPECT_EQ(tpc_to_remove(partly_known, resolve_mask("gpc1,2,62", partly_known).mask), 62);  // TPC 62 is descriptor bit 75
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("1")), std::nullopt);
}
