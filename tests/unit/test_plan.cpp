// Seed 002's partition-and-allocate for gpupart's processes (planner/plan.hpp) and the GPC-packed
// placement of its partitions (planner/plan_placement.hpp).
#include <gtest/gtest.h>

#include <set>

#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "planner/plan.hpp"
#include "planner/plan_placement.hpp"
#include "../lib/thrown_message.hpp"

using namespace gpupart;

namespace {

// Two processes on an H100's 66 TPCs, with curves in seconds per launch:
//   matmul, compute-intensive: C(m) = 0.066/m + 0.00002: 1.02 ms at 66 TPCs, 980.4 launches/s
//   copy, memory-intensive:    C(m) = 0.0066/m + 0.0009: 1.00 ms at 66 TPCs, 1000 launches/s, 90% fixed
PlanProcess matmul(Target target) { return PlanProcess{"matmul", {0.066, 0.00002}, Intensity::compute, std::nullopt, target}; }
PlanProcess copy(Target target) { return PlanProcess{"copy", {0.0066, 0.0009}, Intensity::memory, std::nullopt, target}; }

std::string error_of(const std::vector<PlanProcess>& processes, int tpcs) {
    return gpupart::test::thrown_message([&] { plan_partitions(processes, tpcs); });
}

}  // namespace

// matmul at half its full-GPU rate: 490.2/s, a period of 2.04 ms; Lemma 2: 0.066/m + 0.00002 <= 0.00204
// needs m >= 32.67, so 33 TPCs. copy at 800/s: 0.0066/m + 0.0009 <= 0.00125 needs m >= 18.86, so 19
// (the memory-bound copy reaches 80% of its full speed on 29% of the TPCs). 33 + 19 = 52 <= 66: no merge.
TEST(Plan, ComputeAndMemoryProcessOnAnH100) {
    const PartitionPlan plan = plan_partitions({matmul(Target::share(0.5)), copy(Target::rate(800))}, 66);
    ASSERT_TRUE(plan.feasible) << plan.reason;
    EXPECT_EQ(plan.spare_tpcs, 14);
    ASSERT_EQ(plan.partitions.size(), 2u);
    const PlannedProcess& m = plan.processes.at(0);
    const PlannedProcess& c = plan.processes.at(1);
    EXPECT_EQ(m.tpcs, 33);
    EXPECT_EQ(c.tpcs, 19);
    EXPECT_NE(m.partition, c.partition);
    EXPECT_TRUE(m.met && c.met);
    EXPECT_NEAR(m.target_rate, 0.5 / 0.00102, 1e-9);
    EXPECT_DOUBLE_EQ(m.planned_rate, m.target_rate);
    EXPECT_NEAR(m.model_rate, 1.0 / 0.00202, 1e-9);  // C(33) = 2.02 ms
    EXPECT_NEAR(c.model_rate, 1.0 / (0.0066 / 19 + 0.0009), 1e-9);
    EXPECT_FALSE(m.in_conflict);
    // Each partition's load: its process's C over its period (the copy's 1.247 ms of 1.25 ms comes first,
    // the list being in decreasing utilization).
    EXPECT_EQ(plan.partitions[0].processes, std::vector<int>{1});
    EXPECT_NEAR(plan.partitions[0].load, (0.0066 / 19 + 0.0009) * 800, 1e-12);
    EXPECT_NEAR(plan.partitions[1].load, 0.00202 / 0.00204, 1e-12);
    EXPECT_TRUE(plan.reason.empty());
}

// A plan over the 40 TPCs other processes leave: "50%" is still half of matmul's rate on the whole
// GPU's 66 TPCs (490.2/s, the number the app shows as its rate alone), not half of its rate on 40.
TEST(Plan, ShareTargetIsOfTheWholeGpuRateWhenPlanningOverFewerTpcs) {
    PlanOptions options;
    options.whole_gpu_tpcs = 66;
    const PartitionPlan plan = plan_partitions({matmul(Target::share(0.5))}, 40, options);
    ASSERT_TRUE(plan.feasible) << plan.reason;
    EXPECT_NEAR(plan.processes.at(0).target_rate, 0.5 / 0.00102, 1e-9);
    EXPECT_EQ(plan.processes.at(0).tpcs, 33);
    EXPECT_EQ(plan.spare_tpcs, 7);
    // Without it the TPCs planned over are the whole GPU (a caller that plans over every TPC).
    EXPECT_NEAR(plan_partitions({matmul(Target::share(0.5))}, 40).processes.at(0).target_rate, 0.5 / (0.066 / 40 + 0.00002), 1e-9);
}

// matmul at 90% of its full-GPU rate needs 60 TPCs, the copy still 19: 79 > 66, and sharing a partition
// does not help (at 66 TPCs their loads add up to 0.9 + 0.8). Lemma 1 passes (64.3 TPCs of work), so it
// is Algorithm 1 that gives up. Closest: the copy's need drops to 13 TPCs once the targets are scaled to
// f <= 0.00125 / (0.0009 + 0.0066 / 13) = 0.887978, where matmul needs 53: 53 + 13 = 66.
TEST(Plan, InfeasibleTargetsSayWhyAndWhatIsClosest) {
    const PartitionPlan plan = plan_partitions({matmul(Target::share(0.9)), copy(Target::rate(800))}, 66);
    EXPECT_FALSE(plan.feasible);
    EXPECT_EQ(plan.reason.rfind("no two partitions can be merged any more and they need 79 TPCs of the 66 "
                                "(Zahaf et al., RTNS 2021, Algorithm 1 line 7); the closest plan meets 88.8% of every target", 0),
              0u)
        << plan.reason;
    EXPECT_LE(plan.closest_fraction, 0.00125 / (0.0009 + 0.0066 / 13));
    EXPECT_GT(plan.closest_fraction, 0.00125 / (0.0009 + 0.0066 / 13) - 1e-4);
    EXPECT_EQ(plan.processes[0].tpcs, 53);
    EXPECT_EQ(plan.processes[1].tpcs, 13);
    EXPECT_EQ(plan.spare_tpcs, 0);
    for (const PlannedProcess& p : plan.processes) {
        EXPECT_FALSE(p.met);
        EXPECT_NEAR(p.planned_rate, p.target_rate * plan.closest_fraction, 1e-9);
    }
}

// matmul at 2000/s, twice its full-GPU rate: at 1 TPC a launch takes 66.02 ms, so the targets are
// 2000 x 0.06602 + 100 x 0.0075 = 132.8 TPCs of work even with perfect scaling (Lemma 1).
TEST(Plan, TargetsBeyondTheWholeGpusWork) {
    const PartitionPlan plan = plan_partitions({matmul(Target::rate(2000)), copy(Target::rate(100))}, 66);
    EXPECT_FALSE(plan.feasible);
    EXPECT_EQ(plan.reason.rfind("even spread perfectly over TPCs the targets need the work of 132.8 TPCs and the "
                                "GPU has 66 (Zahaf et al., RTNS 2021, Lemma 1)", 0),
              0u)
        << plan.reason;
    EXPECT_LT(plan.closest_fraction, 1.0 / 0.00102 / 2000);  // matmul's whole-GPU rate, 49% of its target
}

// The copy at 1050/s, above its 1000/s on the whole GPU (90% of its time does not shrink with TPCs):
// little work (Lemma 1 passes: 7.9 TPCs) but no partition is fast enough (Lemma 2). Closest: 1000/1050.
TEST(Plan, TargetAboveTheFullGpuRate) {
    const PartitionPlan plan = plan_partitions({copy(Target::rate(1050))}, 66);
    EXPECT_FALSE(plan.feasible);
    EXPECT_EQ(plan.reason.rfind("copy cannot meet its target even alone on all 66 TPCs: one job takes 0.001 s there "
                                "and must end within 0.0009524 s (Zahaf et al., RTNS 2021, Lemma 2)", 0),
              0u)
        << plan.reason;
    EXPECT_LE(plan.closest_fraction, 1000.0 / 1050.0);
    EXPECT_GT(plan.closest_fraction, 1000.0 / 1050.0 - 1e-4);
    EXPECT_EQ(plan.processes[0].tpcs, 66);
}

// Two memory-bound processes never share: on a 1-TPC GPU nothing can be planned at all.
TEST(Plan, TwoMemoryProcessesOnOneTpcCannotBePlanned) {
    const PartitionPlan plan = plan_partitions({copy(Target::rate(1)), copy(Target::rate(1))}, 1);
    EXPECT_FALSE(plan.feasible);
    EXPECT_EQ(plan.closest_fraction, 0.0);
    EXPECT_NE(plan.reason.find("no fraction of the targets can be met either"), std::string::npos) << plan.reason;
    EXPECT_EQ(plan.detail.forbidden_task_pairs, (std::vector<std::pair<int, int>>{{0, 1}}));
    for (const PlannedProcess& p : plan.processes) EXPECT_FALSE(p.met);
}

// A latency target shorter than the period sets the deadline: the copy at 100/s but each launch done
// within 1.25 ms is sized like the copy at 800/s.
TEST(Plan, LatencyTargetSetsTheDeadline) {
    Target target = Target::rate(100);
    target.latency = 0.00125;
    const PartitionPlan plan = plan_partitions({copy(target)}, 66);
    ASSERT_TRUE(plan.feasible);
    EXPECT_EQ(plan.processes[0].tpcs, 19);
}

// Two compute-bound processes, each asking 0.45 launches/s of C(m) = 1/m s, on 1 TPC: sharing it takes
// 0.45 + 0.45 of its time without interference, 1.2 x that = 1.08 with the seed's factor. A conflict
// curve measured beside the other (here: no slowdown) replaces the factor.
TEST(Plan, MeasuredConflictCurveReplacesTheSeedFactor) {
    PlanProcess a{"a", {1.0, 0.0}, Intensity::compute, std::nullopt, Target::rate(0.45)};
    PlanProcess b = a;
    b.name = "b";
    EXPECT_FALSE(plan_partitions({a, b}, 1).feasible);
    a.conflict_curve = a.curve;
    b.conflict_curve = b.curve;
    const PartitionPlan plan = plan_partitions({a, b}, 1);
    ASSERT_TRUE(plan.feasible) << plan.reason;
    ASSERT_EQ(plan.partitions.size(), 1u);
    EXPECT_EQ(plan.partitions[0].processes, (std::vector<int>{0, 1}));
    EXPECT_NEAR(plan.partitions[0].load, 0.9, 1e-12);
    EXPECT_TRUE(plan.processes[0].in_conflict);
    EXPECT_EQ(plan.processes[0].partition, plan.processes[1].partition);
}

TEST(Plan, MalformedTargetsAreRefused) {
    EXPECT_NE(error_of({matmul(Target::share(1.5))}, 66).find("at most 1"), std::string::npos);
    EXPECT_NE(error_of({matmul(Target::rate(0))}, 66).find("must be above zero"), std::string::npos);
    Target late = Target::rate(10);
    late.latency = -1;
    EXPECT_NE(error_of({matmul(late)}, 66).find("latency target"), std::string::npos);
    PlanProcess flat = matmul(Target::rate(10));
    flat.curve = {0.0, 0.001};
    EXPECT_NE(error_of({flat}, 66).find("measure it again"), std::string::npos);
    EXPECT_THROW(plan_partitions({}, 0), UserError);
}

namespace {

// A GPU of GPCs of `sizes` TPCs, mask bits numbered GPC after GPC.
Gpu gpu_with_gpcs(const std::vector<int>& sizes) {
    Gpu gpu;
    int bit = 0;
    for (std::size_t g = 0; g < sizes.size(); ++g) {
        Gpc gpc;
        gpc.index = static_cast<int>(g);
        gpc.tpc_slots = sizes[g];
        gpu.gpcs.push_back(gpc);
        for (int slot = 0; slot < sizes[g]; ++slot, ++bit) {
            Tpc tpc;
            tpc.mask_bit = bit;
            tpc.gpc = static_cast<int>(g);
            tpc.slot = slot;
            tpc.sms = {2 * bit, 2 * bit + 1};
            gpu.tpcs.push_back(tpc);
        }
    }
    return gpu;
}

int gpc_of(const Gpu& gpu, const TpcMask& mask) {
    std::set<int> gpcs;
    for (int bit : mask.bits()) gpcs.insert(*find_tpc(gpu, bit)->gpc);
    return gpcs.size() == 1 ? *gpcs.begin() : -1;
}

}  // namespace

// GPCs of 9, 9, 8 and 7 TPCs; partitions of 5, 9 and 3. Largest first: 9 fills GPC 0 (the first of the
// smallest that hold it); 5 goes to the smallest GPC that holds it, GPC 3 (7); 3 no longer fits in what
// is left of GPC 3 (2), so it goes to the smallest that holds it, GPC 2 (8). Each stays inside one GPC.
TEST(PlanPlacement, PartitionsArePackedLargestFirst) {
    const Gpu gpu = gpu_with_gpcs({9, 9, 8, 7});
    const std::vector<TpcMask> masks = place_partitions_packed(gpu, {5, 9, 3}, real_tpcs(gpu));
    ASSERT_EQ(masks.size(), 3u);
    EXPECT_EQ(masks[0].count(), 5);
    EXPECT_EQ(masks[1].count(), 9);
    EXPECT_EQ(masks[2].count(), 3);
    EXPECT_EQ(gpc_of(gpu, masks[1]), 0);
    EXPECT_EQ(gpc_of(gpu, masks[0]), 3);
    EXPECT_EQ(gpc_of(gpu, masks[2]), 2);
    EXPECT_EQ((masks[0] & masks[1]).count() + (masks[0] & masks[2]).count() + (masks[1] & masks[2]).count(), 0);
}

// The H100 plan above (33 and 19 of 66 TPCs in GPCs of 9, 9, 9, 9, 8, 8, 7, 7): 33 takes three whole
// GPCs of 9 and 6 of a GPC of 7; both masks are disjoint and inside what was available.
TEST(PlanPlacement, H100PlanIsPlacedOnWholeGpcsFirst) {
    const Gpu gpu = gpu_with_gpcs({9, 9, 9, 9, 8, 8, 7, 7});
    const PartitionPlan plan = plan_partitions({matmul(Target::share(0.5)), copy(Target::rate(800))}, 66);
    std::vector<int> counts;
    for (const PlannedPartition& p : plan.partitions) counts.push_back(p.tpcs);
    const std::vector<TpcMask> masks = place_partitions_packed(gpu, counts, real_tpcs(gpu));
    const TpcMask& big = masks[static_cast<std::size_t>(plan.processes[0].partition)];
    const TpcMask& small = masks[static_cast<std::size_t>(plan.processes[1].partition)];
    EXPECT_EQ(big.count(), 33);
    EXPECT_EQ(small.count(), 19);
    // 33 as whole GPCs, none split: 9 + 9 + 8 + 7 (three 9s and a 6 would split one).
    EXPECT_EQ(gpcs_fully_covered(gpu, big), (std::vector<int>{0, 1, 4, 6}));
    EXPECT_EQ((big & small).count(), 0);
}

TEST(PlanPlacement, MoreThanAvailableIsRefused) {
    const Gpu gpu = gpu_with_gpcs({9, 9, 8, 7});
    TpcMask some;
    for (int bit = 0; bit < 10; ++bit) some.set(bit);
    try {
        place_partitions_packed(gpu, {6, 5}, some);
        FAIL() << "11 TPCs placed on 10";
    } catch (const UserError& e) {
        EXPECT_EQ(std::string(e.what()), "the partitions need 11 TPCs but only 10 are available on GPU 0");
    }
    EXPECT_THROW(place_partitions_packed(gpu, {0}, some), UserError);
}
