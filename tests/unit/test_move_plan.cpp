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
    // Its GPCs are full: a GPC no other process uses (gpc3, wholly free) before a TPC of gpc0, whose 2-3
    // another process holds (issue 19, item 3: + took a TPC from another process's GPC while a GPC was free).
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), tpcs("0-1,27-34")), 27);
    const auto whole = choose_tpc_to_add(h200(), tpcs("gpc1"), tpcs("0-1,27-34"));
    ASSERT_TRUE(whole.has_value());
    EXPECT_EQ(whole->why, "gpc3, a GPC no other process uses; its own GPCs have no free TPC");
    // The smallest wholly free GPC, so the larger ones stay whole: gpc0 (4 real TPCs) before gpc3 (8).
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), tpcs("0-3,27-34")), 0);
    // No GPC is wholly free: a shared one, and it says so.
    const auto shared = choose_tpc_to_add(h200(), tpcs("gpc1"), tpcs("0-1,27-28"));
    ASSERT_TRUE(shared.has_value());
    EXPECT_NE(shared->why.find("shared with another process"), std::string::npos);
    // Its own GPC first, even when a whole GPC is free.
    EXPECT_EQ(tpc_to_add(h200(), tpcs("9-12"), tpcs("13-16,27-34")), 13);
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), TpcMask{}), std::nullopt);
    EXPECT_EQ(tpc_to_add(h200(), tpcs("gpc1"), TpcMask::range(4, 8)), std::nullopt);  // holes only
}

TEST(MovePlan, ShrinkingTakesFromTheGpcTheProcessUsesLeast) {
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("gpc1,18")), 18);
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("gpc1-2")), 25);  // a tie: the higher GPC's highest TPC
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("gpc6,75")), 75);  // TPCs of no known GPC go first
    EXPECT_EQ(tpc_to_remove(h200(), tpcs("9")), std::nullopt);
}
