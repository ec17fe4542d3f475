// The SMLP's pure core (backend/smlp/smlp_core.h) against Ali et al., ECRTS 2024, section 3: Examples 8 and 10 as
// exact traces, Rules 1, 2 (z), 3 (the inheritance target), 4 and 5, and the GPC-packed grant choice.
#include <gtest/gtest.h>

#include "smlp_test_support.hpp"

namespace {

using namespace gpupart::smlp_test;

uint32_t free_count(const gpupart_smlp_file& file) {
    uint32_t free_tpcs[4];
    return gpupart_smlp_core_free_tpcs(&file, free_tpcs);
}

uint32_t queue_of(const gpupart_smlp_file& file, int index) { return file.requests[index].queue; }

// Figure 6 / Examples 8 and 10: h = 1, M = 2, H = 3; J3 > J2 > J1 in priority.
TEST(SmlpCore, Examples8And10ExactTrace) {
    auto file = make_component(3, 1, 2);
    // t = 0: |I(0)| = H, no requests.
    EXPECT_EQ(free_count(*file), 3u);
    EXPECT_EQ(gpupart_smlp_core_count(file.get(), GPUPART_SMLP_SQ), 0u);

    // t = 1: R1 with L1 = {5, 3, 3}: Rule 1 -> SQ, Rule 2: z1(1) = 2 (3 TPCs gain nothing over 2).
    const std::vector<uint32_t> l1{5, 3, 3};
    const int r1 = issue(*file, 101, 1, l1, 1);
    ASSERT_GE(r1, 0);
    EXPECT_EQ(queue_of(*file, r1), GPUPART_SMLP_SQ);
    EXPECT_EQ(file->requests[r1].granted_tpcs, 2u);
    EXPECT_EQ(file->requests[r1].granted[0], 0x3u);
    EXPECT_EQ(file->requests[r1].satisfied_realtime_ns, 1u);
    EXPECT_EQ(free_count(*file), 1u);

    // t = 2: R2 (J2 above J1) with L2 = {3, 2, 1}: SQ with the only remaining TPC: z2(2) = 1.
    const int r2 = issue(*file, 102, 2, {3, 2, 1}, 2);
    ASSERT_GE(r2, 0);
    EXPECT_EQ(queue_of(*file, r2), GPUPART_SMLP_SQ);
    EXPECT_EQ(gpupart_smlp_core_z(&file->requests[r2], 1, 1), 1u);
    EXPECT_EQ(file->requests[r2].granted_tpcs, 1u);
    EXPECT_EQ(file->requests[r2].granted[0], 0x4u);
    EXPECT_EQ(free_count(*file), 0u);

    // t = 3: R3 (J3 above both) with L3 = {3, 1, 1}: |I(3)| = 0 and the FQ has room: FQ.
    const int r3 = issue(*file, 103, 3, {3, 1, 1}, 3);
    ASSERT_GE(r3, 0);
    EXPECT_EQ(queue_of(*file, r3), GPUPART_SMLP_FQ);
    EXPECT_EQ(gpupart_smlp_core_z(&file->requests[r3], 1, free_count(*file)), 0u);
    EXPECT_EQ(gpupart_smlp_core_count(file.get(), GPUPART_SMLP_FQ), 1u);
    EXPECT_EQ(gpupart_smlp_core_count(file.get(), GPUPART_SMLP_PQ), 0u);
    EXPECT_EQ(gpupart_smlp_core_count(file.get(), GPUPART_SMLP_SQ), 2u);
    // Rule 3 (Example 8): J1, holding the earliest grant, inherits J3's priority.
    int32_t inherited = 0;
    EXPECT_EQ(gpupart_smlp_core_rule3_target(file.get(), &inherited), r1);
    EXPECT_EQ(inherited, 3);

    // t = 4 (Example 10): R1 completes and is finalized; |I(4)| = 2, Rule 4 satisfies R3 with z3(4) = 2.
    EXPECT_EQ(gpupart_smlp_core_z(&file->requests[r3], 1, 2), 2u);
    ASSERT_EQ(gpupart_smlp_core_finalize(file.get(), r1, 4), 0);
    EXPECT_EQ(queue_of(*file, r1), GPUPART_SMLP_FREE);
    EXPECT_EQ(queue_of(*file, r3), GPUPART_SMLP_SQ);
    EXPECT_EQ(file->requests[r3].granted_tpcs, 2u);
    EXPECT_EQ(file->requests[r3].granted[0], 0x3u);  // R1's TPCs
    EXPECT_EQ(file->requests[r3].satisfied_realtime_ns, 4u);
    EXPECT_EQ(file->requests[r2].granted[0], 0x4u);  // R2 untouched
    EXPECT_EQ(free_count(*file), 0u);
    EXPECT_EQ(gpupart_smlp_core_count(file.get(), GPUPART_SMLP_FQ), 0u);
    EXPECT_EQ(gpupart_smlp_core_rule3_target(file.get(), &inherited), -1);  // nobody waits
    EXPECT_EQ(file->header.satisfied, 3u);
    EXPECT_EQ(file->header.finalized, 1u);
    EXPECT_EQ(file->header.max_wait_ns, 1u);  // R3: issued at 3, satisfied at 4
    char why[200] = "";
    EXPECT_EQ(gpupart_smlp_core_validate(file.get(), why, sizeof why), 0) << why;
}

// Rules 1 and 5: a full FQ sends requests to the PQ, which feeds the FQ by priority, not arrival.
TEST(SmlpCore, PriorityQueueFeedsFifoByPriority) {
    auto file = make_component(2, 1, 1);
    const int holder = issue(*file, 1, 1, {2, 1}, 10);        // z = 2: takes both TPCs
    const int first = issue(*file, 2, 1, {4, 2}, 11);         // FQ (room for M = 1)
    const int low = issue(*file, 3, 5, {1, 1}, 12);           // PQ
    const int high = issue(*file, 4, 9, {1, 1}, 13);          // PQ, higher priority, later
    EXPECT_EQ(queue_of(*file, holder), GPUPART_SMLP_SQ);
    EXPECT_EQ(queue_of(*file, first), GPUPART_SMLP_FQ);
    EXPECT_EQ(queue_of(*file, low), GPUPART_SMLP_PQ);
    EXPECT_EQ(queue_of(*file, high), GPUPART_SMLP_PQ);
    EXPECT_EQ(gpupart_smlp_core_head(file.get(), GPUPART_SMLP_PQ), high);
    int32_t inherited = 0;
    EXPECT_EQ(gpupart_smlp_core_rule3_target(file.get(), &inherited), holder);
    EXPECT_EQ(inherited, 9);

    ASSERT_EQ(gpupart_smlp_core_finalize(file.get(), holder, 20), 0);
    EXPECT_EQ(queue_of(*file, first), GPUPART_SMLP_SQ);  // Rule 4: both TPCs (z = 2)
    EXPECT_EQ(file->requests[first].granted_tpcs, 2u);
    EXPECT_EQ(queue_of(*file, high), GPUPART_SMLP_FQ);   // Rule 5: the PQ's head by priority
    EXPECT_EQ(queue_of(*file, low), GPUPART_SMLP_PQ);

    ASSERT_EQ(gpupart_smlp_core_finalize(file.get(), first, 30), 0);
    EXPECT_EQ(queue_of(*file, high), GPUPART_SMLP_SQ);   // z = 1 of the 2 free
    EXPECT_EQ(file->requests[high].granted_tpcs, 1u);
    EXPECT_EQ(queue_of(*file, low), GPUPART_SMLP_SQ);    // moved up (Rule 5) and satisfied (Rule 4)
    EXPECT_EQ(file->requests[low].granted_tpcs, 1u);
    EXPECT_EQ(file->requests[low].granted[0] & file->requests[high].granted[0], 0u);
}

TEST(SmlpCore, WithdrawnWaiterLetsThePriorityQueueIn) {
    auto file = make_component(1, 1, 1);
    issue(*file, 1, 1, {1}, 1);
    const int waiting = issue(*file, 2, 1, {1}, 2);
    const int next = issue(*file, 3, 1, {1}, 3);
    ASSERT_EQ(queue_of(*file, next), GPUPART_SMLP_PQ);
    ASSERT_EQ(gpupart_smlp_core_withdraw(file.get(), waiting, 4), 0);
    EXPECT_EQ(queue_of(*file, waiting), GPUPART_SMLP_FREE);
    EXPECT_EQ(queue_of(*file, next), GPUPART_SMLP_FQ);
    EXPECT_EQ(gpupart_smlp_core_withdraw(file.get(), 0, 5), -ENOENT);  // an SQ record is finalized, not withdrawn
}

// Rule 2 with z as smlp_layout.h defines it (tolerance, h, lists shorter than H/h).
TEST(SmlpCore, ZTakesTheFewestTpcsWithinTolerance) {
    gpupart_smlp_request record{};
    const uint32_t levels[] = {100, 52, 50, 50};
    std::copy(std::begin(levels), std::end(levels), record.levels);
    record.level_count = 4;
    EXPECT_EQ(gpupart_smlp_core_z(&record, 1, 4), 3u);  // exact: the least k with L(k) <= L(4) = 50
    EXPECT_EQ(gpupart_smlp_core_z(&record, 1, 2), 2u);
    EXPECT_EQ(gpupart_smlp_core_z(&record, 1, 1), 1u);
    EXPECT_EQ(gpupart_smlp_core_z(&record, 1, 0), 0u);
    record.tolerance_ppm = 50000;                        // 5%: 52 <= 52.5
    EXPECT_EQ(gpupart_smlp_core_z(&record, 1, 4), 2u);
    EXPECT_EQ(gpupart_smlp_core_z(&record, 1, 9), 2u);   // beyond the list: no gain, same answer
    record.tolerance_ppm = 0;
    EXPECT_EQ(gpupart_smlp_core_z(&record, 2, 8), 6u);   // h = 2: L(2)..L(8); |I| = 8 -> 6 TPCs
    EXPECT_EQ(gpupart_smlp_core_z(&record, 2, 5), 4u);   // |I| rounded down to 4
    EXPECT_EQ(gpupart_smlp_core_z(&record, 2, 1), 0u);   // fewer than h
    // Experiment 2's kernel (vectors sized for 8 SMs): it runs in ceil(8/j) waves on j SMs, so with 6
    // free, 4 gains as much as 5 or 6 (section 6: "z_i(t) ... should return 4"), and 8 is the best.
    gpupart_smlp_request waves{};
    for (uint32_t j = 1; j <= 19; ++j) waves.levels[j - 1] = 1000 * ((8 + j - 1) / j);
    waves.level_count = 19;
    EXPECT_EQ(gpupart_smlp_core_z(&waves, 1, 6), 4u);
    EXPECT_EQ(gpupart_smlp_core_z(&waves, 1, 19), 8u);
    // Experiment 1's generated step function (L = Lmax/rho * max(ceil((rho-j+1)/j), 1), rho = 8) is
    // flat from j = 5 on: z never exceeds 5.
    const std::vector<uint32_t> steps = step_levels(8000, 8, 1, 19);
    EXPECT_EQ(steps, (std::vector<uint32_t>{8000, 4000, 2000, 2000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000,
                                            1000, 1000, 1000, 1000, 1000, 1000, 1000}));
    gpupart_smlp_request generated{};
    std::copy(steps.begin(), steps.end(), generated.levels);
    generated.level_count = static_cast<uint32_t>(steps.size());
    EXPECT_EQ(gpupart_smlp_core_z(&generated, 1, 6), 5u);
    EXPECT_EQ(gpupart_smlp_core_z(&generated, 1, 19), 5u);
    EXPECT_EQ(gpupart_smlp_core_z(&generated, 1, 4), 3u);
}

TEST(SmlpCore, GrantsArePackedIntoFewGpcs) {
    // GPC 0: TPCs 0-3, GPC 1: 4-9, GPC 2: 10-11.
    auto file = make_component(12, 1, 4, {{0, 1, 2, 3}, {4, 5, 6, 7, 8, 9}, {10, 11}});
    uint32_t all[4] = {0xfffu, 0, 0, 0};
    uint32_t out[4];
    gpupart_smlp_core_choose(&file->header, all, 5, out);
    EXPECT_EQ(out[0], 0x1f0u);  // five of GPC 1 (the most free)
    gpupart_smlp_core_choose(&file->header, all, 8, out);
    EXPECT_EQ(out[0], 0x3f3u);  // all of GPC 1, then the lowest two of GPC 0
    uint32_t some[4] = {0xc0fu, 0, 0, 0};  // GPC 0 has 4 free, GPC 2 has 2, GPC 1 none
    gpupart_smlp_core_choose(&file->header, some, 3, out);
    EXPECT_EQ(out[0], 0x7u);
    uint32_t tie[4] = {0x3c3u, 0, 0, 0};  // GPC 0: TPCs 0, 1; GPC 1: TPCs 6-9
    gpupart_smlp_core_choose(&file->header, tie, 4, out);
    EXPECT_EQ(out[0], 0x3c0u);
    uint32_t even[4] = {0x033u, 0, 0, 0};  // GPC 0: 0,1 and GPC 1: 4,5: a tie, the lower index first
    gpupart_smlp_core_choose(&file->header, even, 2, out);
    EXPECT_EQ(out[0], 0x3u);
    // No map: the lowest free bits.
    auto plain = make_component(12, 1, 4);
    uint32_t holes[4] = {0xa5au, 0, 0, 0};
    gpupart_smlp_core_choose(&plain->header, holes, 3, out);
    EXPECT_EQ(out[0], 0x01au);
}

TEST(SmlpCore, GrantsOnLargeComponentsUseBitsAbove63) {
    auto file = make_component(128, 2, 4);
    const int whole = issue(*file, 1, 1, std::vector<uint32_t>(64, 7), 1);  // flat: z = h
    ASSERT_GE(whole, 0);
    EXPECT_EQ(file->requests[whole].granted_tpcs, 2u);
    std::vector<uint32_t> falling;
    for (uint32_t k = 1; k <= 64; ++k) falling.push_back(1000 - k);
    const int big = issue(*file, 2, 1, falling, 2);  // strictly faster with more: all 126 free
    EXPECT_EQ(file->requests[big].granted_tpcs, 126u);
    EXPECT_EQ(file->requests[big].granted[3], 0xffffffffu);
    EXPECT_EQ(free_count(*file), 0u);
}

TEST(SmlpCore, Rule3TargetIsTheEarliestSatisfiedLowerPriorityHolder) {
    auto file = make_component(3, 1, 3);
    const int a = issue(*file, 1, 40, {1, 1, 1}, 1);  // z = 1 each
    const int b = issue(*file, 2, 10, {1, 1, 1}, 2);
    const int c = issue(*file, 3, 5, {1, 1, 1}, 3);
    int32_t priority = 0;
    EXPECT_EQ(gpupart_smlp_core_rule3_target(file.get(), &priority), -1);  // no suspended request
    issue(*file, 4, 20, {1, 1, 1}, 4);
    EXPECT_EQ(gpupart_smlp_core_rule3_target(file.get(), &priority), b);  // a's priority is above 20
    EXPECT_EQ(priority, 20);
    gpupart_smlp_core_finalize(file.get(), b, 5);  // the waiter takes b's TPC
    EXPECT_EQ(gpupart_smlp_core_rule3_target(file.get(), &priority), -1);
    issue(*file, 5, 3, {1, 1, 1}, 6);  // below every holder: nobody inherits
    EXPECT_EQ(gpupart_smlp_core_rule3_target(file.get(), &priority), -1);
    issue(*file, 6, 50, {1, 1, 1}, 7);
    EXPECT_EQ(gpupart_smlp_core_rule3_target(file.get(), &priority), a);
    EXPECT_EQ(priority, 50);
    (void)c;
}

TEST(SmlpCore, IssueRefusesBadRequestsAndAFullTable) {
    auto file = make_component(4, 2, 2);
    EXPECT_EQ(issue(*file, 1, 1, {}, 1), -EINVAL);
    EXPECT_EQ(issue(*file, 1, 1, {3, 2, 1}, 1), -EINVAL);  // H/h = 2 lengths at most
    EXPECT_EQ(issue(*file, 1, 1, {3}, 1, GPUPART_SMLP_MAX_TOLERANCE_PPM + 1), -EINVAL);
    EXPECT_EQ(issue(*file, 0, 1, {3}, 1), -EINVAL);
    for (unsigned i = 0; i < GPUPART_SMLP_MAX_REQUESTS; ++i) ASSERT_GE(issue(*file, 7, 1, {1}, 2), 0);
    EXPECT_EQ(issue(*file, 7, 1, {1}, 3), -EBUSY);
    char why[200] = "";
    EXPECT_EQ(gpupart_smlp_core_validate(file.get(), why, sizeof why), 0) << why;
    EXPECT_EQ(gpupart_smlp_core_count(file.get(), GPUPART_SMLP_FQ), 2u);
    EXPECT_EQ(gpupart_smlp_core_count(file.get(), GPUPART_SMLP_SQ), 2u);
}

TEST(SmlpCore, LabelsLoseControlCharacters) {
    auto file = make_component(2, 1, 1);
    const std::vector<uint32_t> levels{1, 1};
    const gpupart_smlp_issue request{1, 1, 1, 1, levels.data(), 2, 0, "a\x1b[31mred\nline that is far too long to keep"};
    const int index = gpupart_smlp_core_issue(file.get(), &request, 1);
    ASSERT_GE(index, 0);
    EXPECT_STREQ(file->requests[index].label, "a?[31mred?line that is far too ");
}

TEST(SmlpCore, DroppedRecordsReturnTheirTpcs) {
    auto file = make_component(4, 1, 2);
    const int dead = issue(*file, 1, 1, {4, 3, 2, 1}, 1);  // all 4
    const int waiter = issue(*file, 2, 1, {1, 1, 1, 1}, 2);
    EXPECT_EQ(queue_of(*file, waiter), GPUPART_SMLP_FQ);
    EXPECT_EQ(gpupart_smlp_core_drop(file.get(), 1ull << dead, 3), 1);
    EXPECT_EQ(queue_of(*file, waiter), GPUPART_SMLP_SQ);
    EXPECT_EQ(file->header.reclaimed, 1u);
    EXPECT_EQ(gpupart_smlp_core_drop(file.get(), 1ull << dead, 4), 0);  // already free
}

}  // namespace
