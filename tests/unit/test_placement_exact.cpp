// GPC-packed placement prefers whole GPCs that add up to the count exactly (no GPC split), the fewest of
// them, then the lowest numbers; otherwise best fit as before.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
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
// The TPC numbers of a list of launch-descriptor bits (the form these expectations were first measured in),
// through the H200's map: the same TPCs.
std::string tpcs_of_bits(const std::string& bits) {
    // bits:0x... is how an expression names descriptor bits; the list is turned into that hex first.
    TpcMask mask;
    std::size_t at = 0;
    while (at < bits.size()) {
        const std::size_t end = std::min(bits.find(',', at), bits.size());
        const std::string item = bits.substr(at, end - at);
        const std::size_t dash = item.find('-');
        const int first = std::stoi(item.substr(0, dash));
        mask |= TpcMask::range(first, dash == std::string::npos ? first : std::stoi(item.substr(dash + 1)));
        at = end + 1;
    }
    return resolve_mask("bits:" + mask.to_hex(), h200()).mask.to_list();
}
}  // namespace

TEST(PlacementExact, CountsThatAreSumsOfWholeGpcsSplitNone) {
    // The recorded H200: gpc0-5 hold 8 TPCs, gpc6-7 hold 9.
    EXPECT_EQ(placed(16), tpcs_of_bits("0-3,9-16,75,78,81,83"));                   // gpc0 + gpc1, not gpc6 and 7 of another
    EXPECT_EQ(placed(17), tpcs_of_bits("0-3,54-62,75,78,81,83"));                  // gpc0 + gpc6
    EXPECT_EQ(placed(33), tpcs_of_bits("0-3,9-16,18-25,54-62,75,78,81,83"));       // 8 + 8 + 8 + 9
    EXPECT_EQ(placed(9), tpcs_of_bits("54-62"));                                   // one GPC of 9
    // No whole GPCs add up to 7 or 12: best fit as before.
    EXPECT_EQ(placed(7), tpcs_of_bits("0-3,75,78,81"));
    EXPECT_EQ(placed(12), tpcs_of_bits("0-2,54-62"));
    // Only what is available counts: with gpc0 taken, 16 is gpc1 + gpc2.
    const TpcMask without_gpc0 = real_tpcs(h200()) & ~gpc_tpcs(h200(), 0);
    EXPECT_EQ(placed(16, without_gpc0), tpcs_of_bits("9-16,18-25"));
}
