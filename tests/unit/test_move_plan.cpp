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

TEST(MovePlan, GrowingFillsTheGpcTheProcessUsesMost) {
    // Holds 9-12 (gpc1) and 18 (gpc2): the free TPCs of gpc1 come first.
    EXPECT_EQ(tpc_to_add(h200(), tpcs("9-12,18"), tpcs("13-16,19-25")), 13);
    // Its GPCs are full: a wholly free GPC (gpc3), not gpc0's free 0-1, which another process's 2-3 would
    // then share with it (issue 19).
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), tpcs("0-1,27-34")), 27);
    EXPECT_NE(choose_tpc_to_add(h200(), tpcs("gpc1"), tpcs("0-1,27-34"))->why.find("gpc3, which is wholly free"), std::string::npos);
    // No GPC wholly free: the best fit among the rest, and the reason says it shares a GPC.
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), tpcs("0-1,27-30")), 0);
    EXPECT_NE(choose_tpc_to_add(h200(), tpcs("gpc1"), tpcs("0-1,27-30"))->why.find("another process also uses"), std::string::npos);
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), TpcMask{}), std::nullopt);
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), TpcMask::range(4, 8)), std::nullopt);  // holes only
}

TEST(MovePlan, ShrinkingTakesFromTheGpcTheProcessUsesLeast) {
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("gpc1,18")), 18);
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("gpc1-2")), 25);  // a tie: the higher GPC's highest TPC
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("gpc6,75")), 75);     // 75 is gpc0's: the GPC it uses least
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("gpc1,18,75")), 18);  // a tie of gpc0 and gpc2: the higher GPC's
    // Where a source gave some TPCs no GPC, those go first.
    Gpu partly_known = h200();
    for (Tpc& tpc : partly_known.tpcs)
        if (tpc.mask_bit == 75 || tpc.mask_bit == 78 || tpc.mask_bit == 81 || tpc.mask_bit == 83) tpc.gpc.reset(), tpc.slot.reset();
    EXPECT_EQ(tpc_to_remove(partly_known, resolve_mask("gpc1,18,75", partly_known).mask), 75);
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("9")), std::nullopt);
}
