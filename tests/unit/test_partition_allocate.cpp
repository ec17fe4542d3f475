// Seed 002's partition-and-allocate (planner/task_model.hpp, planner/partition_allocate.hpp).
//
// The seed gives no worked task set for Algorithms 1-3 (its evaluation, Section 7, is statistical), so
// the task sets here are built with its own generator's parameters (Section 7.1): a_i = T_i x u_i,
// b_i = 0.02 a_i for compute-intensive and 0.1 a_i for memory-intensive tasks, conflict factor k = 1.2
// (compute) and 2.3 (memory), deadline D_i = 0.75 T_i. Every expected result is derived by hand in the
// comments, step by step through the algorithms, from these numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "model/user_error.hpp"
#include "planner/partition_allocate.hpp"

using namespace gpupart;

namespace {

// A task as Section 7.1 generates it.
Task seed_task(std::string name, Intensity type, double period, double utilization) {
    const double a = period * utilization;
    const ExecutionModel n{a, (type == Intensity::compute ? 0.02 : 0.1) * a};
    return Task{std::move(name), type, n, n.scaled(type == Intensity::compute ? 1.2 : 2.3), period, 0.75 * period};
}

Task task_ab(std::string name, Intensity type, double a, double b, double period) {
    const ExecutionModel n{a, b};
    return Task{std::move(name), type, n, n.scaled(type == Intensity::compute ? 1.2 : 2.3), period, 0.75 * period};
}

Partition part(std::vector<int> tasks, int tpcs) { return Partition{std::move(tasks), tpcs}; }

// Example A: four tasks of period 100 (D = 75) on 2 TPCs.
//   t0 compute u = 0.30: a = 30, b = 0.6   Cn(1) = 30.6   U at 1 TPC = 0.306
//   t1 memory  u = 0.30: a = 30, b = 3     Cn(1) = 33     U = 0.330
//   t2 memory  u = 0.25: a = 25, b = 2.5   Cn(1) = 27.5   U = 0.275
//   t3 compute u = 0.20: a = 20, b = 0.4   Cn(1) = 20.4   U = 0.204
// Lemma 1: (30.6 + 33 + 27.5 + 20.4) / 100 = 1.115 <= 2. Lemma 2: every Cn(1) <= 75, so each starts
// with 1 TPC and Pi = 4 > 2: two merges are needed. Densities of pairs at 1 TPC (sum C / 75):
//   {t0,t1} 0.848  {t0,t2} 0.775  {t1,t3} 0.712  {t2,t3} 0.639
//   {t0,t3} both compute, in conflict: 1.2 x (30.6 + 20.4) / 75 = 0.816
//   {t1,t2} both memory, in conflict:  2.3 x (33 + 27.5) / 75 = 1.855 -> never mergeable
//   {t0,t1,t3}: t0, t3 in conflict: (36.72 + 24.48 + 33) / 75 = 1.256 -> not mergeable
std::vector<Task> example_a() {
    return {seed_task("t0", Intensity::compute, 100, 0.30), seed_task("t1", Intensity::memory, 100, 0.30),
            seed_task("t2", Intensity::memory, 100, 0.25), seed_task("t3", Intensity::compute, 100, 0.20)};
}

PartitionOptions seed_options(MergeOrder order, bool exhaustive = false) {
    PartitionOptions options;
    options.order = order;
    options.exhaustive_forbidden = exhaustive;
    options.forbid_memory_pairs = false;  // the seed's own algorithm: no rule beyond the forbidden list
    return options;
}

void expect_step(const MergeStep& step, MergeStep::Kind kind, const Partition& first, const Partition& second,
                 int tpcs = 0) {
    EXPECT_EQ(step.kind, kind);
    EXPECT_EQ(step.first, first);
    EXPECT_EQ(step.second, second);
    if (kind == MergeStep::Kind::merged) {
        EXPECT_EQ(step.tpcs, tpcs);
    }
}

}  // namespace

// Section 4.2's example: "a GPU partition in which we assign 10 kernels, 9 of which are compute
// intensive. The remaining memory intensive kernel will not experience any contention and its conflict
// tag is set for non-conflict, whereas the nine compute kernels are in a state of conflict."
TEST(TaskModel, Section42TenKernelsNineCompute) {
    std::vector<Task> tasks;
    for (int i = 0; i < 9; ++i) tasks.push_back(seed_task("c" + std::to_string(i), Intensity::compute, 100, 0.05));
    tasks.push_back(seed_task("m", Intensity::memory, 100, 0.05));
    std::vector<int> all(10);
    std::iota(all.begin(), all.end(), 0);
    for (int i = 0; i < 9; ++i) {
        EXPECT_TRUE(in_conflict(tasks, all, i));
        EXPECT_DOUBLE_EQ(execution_time(tasks, all, i, 4), 1.2 * tasks[static_cast<std::size_t>(i)].no_conflict.time(4));
    }
    EXPECT_FALSE(in_conflict(tasks, all, 9));
    EXPECT_DOUBLE_EQ(execution_time(tasks, all, 9, 4), tasks[9].no_conflict.time(4));
    EXPECT_FALSE(in_conflict(tasks, {0, 9}, 0));  // one compute beside one memory: neither in conflict
}

TEST(TaskModel, Lemma2IsTheSmallestPartitionMeetingTheDeadline) {
    // Cn(m) = 90/m + 1.8 <= 75: 91.8 at 1, 46.8 at 2.
    EXPECT_EQ(lemma2_tpcs(task_ab("c", Intensity::compute, 90, 1.8, 100), 68), 2);
    // Cn(m) = 1000/m + 20 <= 75: m >= 18.2, so 19.
    EXPECT_EQ(lemma2_tpcs(task_ab("c", Intensity::compute, 1000, 20, 100), 68), 19);
    EXPECT_EQ(lemma2_tpcs(task_ab("c", Intensity::compute, 1000, 20, 100), 18), std::nullopt);
    EXPECT_DOUBLE_EQ(lemma1_demand({task_ab("x", Intensity::compute, 90, 1.8, 100),
                                    task_ab("y", Intensity::memory, 80, 8, 100)}),
                     1.798);
}

// Example A with ≼ (SMS), INA, decreasing utilization, as the seed runs it (no memory-pair rule).
//   list: t1 (0.330), t0 (0.306), t2 (0.275), t3 (0.204)
//   1. P1 = {t1}; merges with t0, t2, t3 need 1, -, 1 TPCs; the best, first in the list: {t0} -> {t0,t1}:1
//      list: {t0,t1} (0.636), {t2}, {t3}; Pi = 3
//   2. P1 = {t0,t1}; both merges fail (1.855-type and 1.256 densities); ≼ returns the first: {t2}, fails,
//      is forbidden (Algorithm 1 line 14)
//   3. P1 = {t0,t1}; partner {t3} fails, forbidden
//   4. {t0,t1} has no partner left; P1 = {t2}: {t0,t1} forbidden, {t3} merges -> {t2,t3}:1; Pi = 2
TEST(PartitionAllocate, ExampleASmallestMergeIna) {
    const PartitionResult r = partition_and_allocate(example_a(), 2, seed_options(MergeOrder::smallest_merge));
    ASSERT_TRUE(r.schedulable) << r.reason;
    EXPECT_EQ(r.partitions, (std::vector<Partition>{part({0, 1}, 1), part({2, 3}, 1)}));
    EXPECT_EQ(r.required_tpcs, 2);
    EXPECT_DOUBLE_EQ(r.lemma1_demand, 1.115);
    EXPECT_TRUE(r.forbidden_task_pairs.empty());
    ASSERT_EQ(r.steps.size(), 4u);
    expect_step(r.steps[0], MergeStep::Kind::merged, part({1}, 1), part({0}, 1), 1);
    expect_step(r.steps[1], MergeStep::Kind::forbidden, part({0, 1}, 1), part({2}, 1));
    expect_step(r.steps[2], MergeStep::Kind::forbidden, part({0, 1}, 1), part({3}, 1));
    expect_step(r.steps[3], MergeStep::Kind::merged, part({2}, 1), part({3}, 1), 1);
    EXPECT_TRUE(r.reason.empty());
}

// The same with ACT (Algorithm 1 line 3): of the six pairs only {t1,t2} fails a merge, so it is
// forbidden up front, step 2 above never happens, and the result is the same.
TEST(PartitionAllocate, ExampleAExhaustiveForbiddenListAct) {
    const PartitionResult r = partition_and_allocate(example_a(), 2, seed_options(MergeOrder::smallest_merge, true));
    ASSERT_TRUE(r.schedulable);
    EXPECT_EQ(r.forbidden_task_pairs, (std::vector<std::pair<int, int>>{{1, 2}}));
    EXPECT_EQ(r.partitions, (std::vector<Partition>{part({0, 1}, 1), part({2, 3}, 1)}));
    ASSERT_EQ(r.steps.size(), 3u);
    expect_step(r.steps[1], MergeStep::Kind::forbidden, part({0, 1}, 1), part({3}, 1));
}

// gpupart's rule: two memory-intensive tasks never share a partition. It enters {t1,t2} into
// the forbidden list as a task pair, which here is what ACT finds on its own.
TEST(PartitionAllocate, ExampleAMemoryPairsForbidden) {
    PartitionOptions options = seed_options(MergeOrder::smallest_merge);
    options.forbid_memory_pairs = true;
    const PartitionResult r = partition_and_allocate(example_a(), 2, options);
    ASSERT_TRUE(r.schedulable);
    EXPECT_EQ(r.forbidden_task_pairs, (std::vector<std::pair<int, int>>{{1, 2}}));
    EXPECT_EQ(r.partitions, (std::vector<Partition>{part({0, 1}, 1), part({2, 3}, 1)}));
    EXPECT_EQ(r.steps.size(), 3u);
}

// Example A with > (BF, Definition 4): partners by the utilization of the merged set at the size
// Algorithm 2 starts from (1 TPC), lowest first.
//   1. P1 = {t1}; partners: {t3} (U 0.534), {t0} (0.636) ({t2} forbidden) -> {t1,t3}:1
//      list: {t1,t3} (0.534), {t0} (0.306), {t2} (0.275)
//   2. P1 = {t1,t3}; its only partner {t0} fails (1.256): forbidden
//   3. P1 = {t0}; {t1,t3} forbidden; {t2} merges -> {t0,t2}:1 (U 0.581, now first in the list)
TEST(PartitionAllocate, ExampleABestFit) {
    PartitionOptions options = seed_options(MergeOrder::best_fit);
    options.forbid_memory_pairs = true;
    const PartitionResult r = partition_and_allocate(example_a(), 2, options);
    ASSERT_TRUE(r.schedulable);
    EXPECT_EQ(r.partitions, (std::vector<Partition>{part({0, 2}, 1), part({1, 3}, 1)}));
    ASSERT_EQ(r.steps.size(), 3u);
    expect_step(r.steps[0], MergeStep::Kind::merged, part({1}, 1), part({3}, 1), 1);
    expect_step(r.steps[1], MergeStep::Kind::forbidden, part({1, 3}, 1), part({0}, 1));
    expect_step(r.steps[2], MergeStep::Kind::merged, part({0}, 1), part({2}, 1), 1);
}

// Example A with the list in increasing utilization order: t3, t2, t0, t1.
//   1. P1 = {t3}; merges with t2, t0, t1 all need 1 TPC; the first, {t2} -> {t2,t3}:1
//      list: {t0} (0.306), {t1} (0.330), {t2,t3} (0.479)
//   2. P1 = {t0}; {t1} merges into 1 TPC, {t2,t3} does not (t0, t3 in conflict: 1.183) -> {t0,t1}:1
TEST(PartitionAllocate, ExampleAIncreasingUtilizationOrder) {
    PartitionOptions options = seed_options(MergeOrder::smallest_merge);
    options.list_order = ListOrder::increasing_utilization;
    const PartitionResult r = partition_and_allocate(example_a(), 2, options);
    ASSERT_TRUE(r.schedulable);
    EXPECT_EQ(r.partitions, (std::vector<Partition>{part({2, 3}, 1), part({0, 1}, 1)}));
    ASSERT_EQ(r.steps.size(), 2u);
    expect_step(r.steps[0], MergeStep::Kind::merged, part({3}, 1), part({2}, 1), 1);
    expect_step(r.steps[1], MergeStep::Kind::merged, part({0}, 1), part({1}, 1), 1);
}

// Example B: Algorithm 2 grows m from max(|P1|, |P2|). Period 100, D = 75:
//   t0 compute a = 90, b = 1.8: Cn(1) = 91.8 > 75, Cn(2) = 46.8 -> Lemma 2: 2 TPCs
//   t1 memory  a = 80, b = 8:   Cn(1) = 88 > 75,   Cn(2) = 48   -> 2 TPCs
// Together (no conflict): at 2 TPCs (46.8 + 48) / 75 = 1.264; at 3 (31.8 + 34.67) / 75 = 0.886.
// On 3 TPCs: Pi = 4 > 3, the merge needs 3 < 2 + 2 and is valid (Definition 2).
TEST(PartitionAllocate, ExampleBMergeGrowsThePartition) {
    const std::vector<Task> tasks = {task_ab("t0", Intensity::compute, 90, 1.8, 100),
                                     task_ab("t1", Intensity::memory, 80, 8, 100)};
    EXPECT_EQ(merge_partitions(tasks, part({0}, 2), part({1}, 2), 68), part({0, 1}, 3));
    const PartitionResult r = partition_and_allocate(tasks, 3, seed_options(MergeOrder::smallest_merge));
    ASSERT_TRUE(r.schedulable);
    EXPECT_EQ(r.partitions, (std::vector<Partition>{part({0, 1}, 3)}));
    ASSERT_EQ(r.steps.size(), 1u);
    expect_step(r.steps[0], MergeStep::Kind::merged, part({1}, 2), part({0}, 2), 3);  // t1's U 0.48 > t0's 0.468
    // Plenty of TPCs: Lemma 3 holds at once, nothing is merged.
    const PartitionResult roomy = partition_and_allocate(tasks, 68, seed_options(MergeOrder::smallest_merge));
    EXPECT_EQ(roomy.partitions, (std::vector<Partition>{part({1}, 2), part({0}, 2)}));
    EXPECT_TRUE(roomy.steps.empty());
}

// Example B on 2 TPCs: Lemma 1 passes (1.798 <= 2), but the only merge would need 3 TPCs, more than
// the GPU has: it fails, is forbidden, and Algorithm 3 finds nothing left (Algorithm 1 line 7).
TEST(PartitionAllocate, ExampleBInfeasibleWhenNoMergeIsLeft) {
    const std::vector<Task> tasks = {task_ab("t0", Intensity::compute, 90, 1.8, 100),
                                     task_ab("t1", Intensity::memory, 80, 8, 100)};
    const PartitionResult r = partition_and_allocate(tasks, 2, seed_options(MergeOrder::smallest_merge));
    EXPECT_FALSE(r.schedulable);
    EXPECT_EQ(r.partitions, (std::vector<Partition>{part({1}, 2), part({0}, 2)}));
    EXPECT_EQ(r.required_tpcs, 4);
    EXPECT_EQ(r.reason, "no two partitions can be merged any more and they need 4 TPCs of the 2 (Zahaf et al., RTNS 2021, Algorithm 1 line 7)");
    ASSERT_EQ(r.steps.size(), 1u);
    EXPECT_EQ(r.steps[0].kind, MergeStep::Kind::forbidden);
}

// Example B on 1 TPC: Lemma 1 rejects it before anything else (1.798 > 1).
TEST(PartitionAllocate, Lemma1RejectsFirst) {
    const std::vector<Task> tasks = {task_ab("t0", Intensity::compute, 90, 1.8, 100),
                                     task_ab("t1", Intensity::memory, 80, 8, 100)};
    const PartitionResult r = partition_and_allocate(tasks, 1);
    EXPECT_FALSE(r.schedulable);
    EXPECT_TRUE(r.partitions.empty());
    EXPECT_EQ(r.reason, "even spread perfectly over TPCs the targets need the work of 1.8 TPCs and the GPU has 1 "
                        "(Zahaf et al., RTNS 2021, Lemma 1)");
}

// A task whose fixed part alone exceeds its deadline (b = 80 > D = 75) fits no partition (Lemma 2).
TEST(PartitionAllocate, Lemma2RejectsATaskNoPartitionCanHold) {
    const std::vector<Task> tasks = {task_ab("copy", Intensity::memory, 10, 80, 100),
                                     task_ab("t0", Intensity::compute, 90, 1.8, 100)};
    const PartitionResult r = partition_and_allocate(tasks, 68);
    EXPECT_FALSE(r.schedulable);
    EXPECT_EQ(r.reason.rfind("copy cannot meet its target even alone on all 68 TPCs", 0), 0u) << r.reason;
    EXPECT_NE(r.reason.find("(Zahaf et al., RTNS 2021, Lemma 2)"), std::string::npos);
}

// Two memory-intensive tasks that would share 1 TPC happily by the seed's test with k = 1 are kept
// apart by gpupart's rule, whatever it costs: on 1 TPC that is infeasible.
TEST(PartitionAllocate, MemoryPairNeverSharesEvenWhenTheTestWouldAllowIt) {
    std::vector<Task> tasks = {seed_task("m0", Intensity::memory, 100, 0.1), seed_task("m1", Intensity::memory, 100, 0.1)};
    for (Task& t : tasks) t.conflict = t.no_conflict;  // no interference at all
    PartitionOptions seed = seed_options(MergeOrder::smallest_merge);
    EXPECT_TRUE(partition_and_allocate(tasks, 1, seed).schedulable);
    PartitionOptions rule = seed;
    rule.forbid_memory_pairs = true;
    const PartitionResult r = partition_and_allocate(tasks, 1, rule);
    EXPECT_FALSE(r.schedulable);
    EXPECT_EQ(r.partitions, (std::vector<Partition>{part({0}, 1), part({1}, 1)}));
}

TEST(PartitionAllocate, MalformedTasksAreRefused) {
    EXPECT_THROW(partition_and_allocate({task_ab("x", Intensity::compute, 0, 1, 100)}, 4), UserError);
    EXPECT_THROW(partition_and_allocate({task_ab("x", Intensity::compute, 1, -1, 100)}, 4), UserError);
    Task late = task_ab("x", Intensity::compute, 1, 0, 100);
    late.deadline = 150;  // beyond its period
    EXPECT_THROW(partition_and_allocate({late}, 4), UserError);
    EXPECT_THROW(partition_and_allocate({}, 0), UserError);
    EXPECT_TRUE(partition_and_allocate({}, 4).schedulable);
}

// Section 7.2, Figure 5: 50 tasks on the 2080 Ti's 68 SMs, half memory-intensive, generated as in 7.1
// (UUniFast-Discard utilizations, periods from 50 to 4000, D = 0.75 T; the seed gives neither its list of
// periods nor its discard bound: a utilization u_i = a_i / T_i above 1 is a task that needs several SMs,
// so sets are discarded only when a task could not meet its deadline on all 68, u_i > 6.5 for a memory-
// intensive one, and 6 is used for all): "When the total utilization is
// less than 35 [...] all heuristics are able to achieve 100% schedulability." Every result is also
// checked for what Algorithm 1 promises: each task in one partition, each partition schedulable, Pi <= M.
TEST(PartitionAllocate, Section72LowUtilizationTaskSetsAreAllSchedulable) {
    std::mt19937 random(2002);
    const std::vector<double> periods = {50, 100, 200, 250, 500, 1000, 2000, 4000};
    for (double total : {20.0, 30.0, 34.0}) {
        std::size_t merges = 0;
        for (int set = 0; set < 10; ++set) {
            std::vector<double> u;
            do {  // UUniFast, discarding sets with a task above utilization 6
                u.clear();
                double left = total;
                for (int i = 1; i < 50; ++i) {
                    const double next = left * std::pow(std::uniform_real_distribution<double>(0, 1)(random), 1.0 / (50 - i));
                    u.push_back(left - next);
                    left = next;
                }
                u.push_back(left);
            } while (*std::max_element(u.begin(), u.end()) > 6.0);
            std::vector<Task> tasks;
            for (int i = 0; i < 50; ++i) {
                const bool memory = std::uniform_real_distribution<double>(0, 1)(random) <= 0.5;  // prm = 50%
                const double period = periods[std::uniform_int_distribution<std::size_t>(0, periods.size() - 1)(random)];
                tasks.push_back(seed_task("t" + std::to_string(i), memory ? Intensity::memory : Intensity::compute,
                                          period, u[static_cast<std::size_t>(i)]));
            }
            for (MergeOrder order : {MergeOrder::smallest_merge, MergeOrder::best_fit}) {
                const PartitionResult r = partition_and_allocate(tasks, 68, seed_options(order));
                ASSERT_TRUE(r.schedulable) << "U = " << total << ", set " << set << ": " << r.reason;
                EXPECT_LE(r.required_tpcs, 68);
                std::vector<int> seen;
                for (const Partition& p : r.partitions) {
                    EXPECT_TRUE(schedulable(tasks, p.tasks, p.tpcs));
                    seen.insert(seen.end(), p.tasks.begin(), p.tasks.end());
                }
                std::sort(seen.begin(), seen.end());
                std::vector<int> all(50);
                std::iota(all.begin(), all.end(), 0);
                EXPECT_EQ(seen, all);
                merges += r.steps.size();
            }
        }
        // At 20 the Lemma 2 partitions fit as they are (Lemma 3); from 30 they must be merged.
        if (total >= 30) {
            EXPECT_GT(merges, 0u) << "U = " << total << ": no merging, so this tested nothing";
        }
    }
}
