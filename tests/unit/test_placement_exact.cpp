// GPC-packed placement prefers whole GPCs that add up to the count exactly (no GPC split), the fewest of
// them, then the lowest numbers; otherwise best fit as before.
#include <gtest/gtest.h>

#include "model/gpu_queries.hpp"
#include "model/placement.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {
const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}
std::string placed(int count, const TpcMask& available = real_tpcs(h200())) {
    return place_tpcs_packed(h200(), count, available).to_list();
}
}  // namespace

TEST(PlacementExact, CountsThatAreSumsOfWholeGpcsSplitNone) {
    // The recorded H200: gpc0-5 hold 8 TPCs, gpc6-7 hold 9.
    EXPECT_EQ(placed(16), "0-3,9-16,75,78,81,83");                   // gpc0 + gpc1, not gpc6 and 7 of another
    EXPECT_EQ(placed(17), "0-3,54-62,75,78,81,83");                  // gpc0 + gpc6
    EXPECT_EQ(placed(33), "0-3,9-16,18-25,54-62,75,78,81,83");       // 8 + 8 + 8 + 9
    EXPECT_EQ(placed(9), "54-62");                                   // one GPC of 9
    // No whole GPCs add up to 7 or 12: best fit as before.
    EXPECT_EQ(placed(7), "0-3,75,78,81");
    EXPECT_EQ(placed(12), "0-2,54-62");
    // Only what is available counts: with gpc0 taken, 16 is gpc1 + gpc2.
    const TpcMask without_gpc0 = real_tpcs(h200()) & ~gpc_tpcs(h200(), 0);
    EXPECT_EQ(placed(16, without_gpc0), "9-16,18-25");
}
