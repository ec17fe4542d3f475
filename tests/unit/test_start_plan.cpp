// plan_start: a process about to start, as `gpupart run` and a Slurm step's placement check it, on a
// hand-made state over the built-in H200.
#include <gtest/gtest.h>

#include <algorithm>

#include "controller/start_plan.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

SystemState state_with(std::vector<ProcessState> processes, bool mps) {
    SystemState state;
    state.gpu = load_snapshot("builtin:h200").gpus.at(0);
    state.processes = std::move(processes);
    state.mps_running = mps;
    state.caller_uid = 1000;
    return state;
}

ProcessState running(int pid, const TpcMask& mask) {
    ProcessState p;
    p.pid = pid;
    p.start_time = 100;
    p.uid = 1000;
    p.command = "worker";
    p.partitioned = true;
    p.mask = mask;
    p.generation = 1;
    return p;
}

bool has(const std::vector<Finding>& findings, const std::string& id) {
    return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; });
}

}  // namespace

TEST(StartPlan, TheNewcomerJoinsTheStateAsAPartitionedProcessWithNoPidYet) {
    const StartPlan plan = plan_start(state_with({running(10, TpcMask::range(0, 15))}, true),
                                      Newcomer{1000, "trainer --fast", "slurm:12.0", TpcMask::range(16, 31)});
    ASSERT_EQ(plan.with_newcomer.processes.size(), 2u);
    const ProcessState& newcomer = plan.with_newcomer.processes.back();
    EXPECT_EQ(newcomer.pid, 0);
    EXPECT_EQ(newcomer.uid, 1000u);
    EXPECT_EQ(newcomer.command, "trainer --fast");
    EXPECT_EQ(newcomer.job, "slurm:12.0");
    EXPECT_TRUE(newcomer.partitioned);
    EXPECT_EQ(newcomer.mask, TpcMask::range(16, 31));
    EXPECT_EQ(newcomer.generation, 1u);
}

TEST(StartPlan, AnOverlapIsAFindingAndTpcsLeftIdleAreNot) {
    const StartPlan overlapping = plan_start(state_with({running(10, TpcMask::range(0, 15))}, true),
                                             Newcomer{1000, "trainer", "", TpcMask::range(8, 23)});
    EXPECT_TRUE(has(overlapping.findings, "overlap"));
    EXPECT_FALSE(has(overlapping.findings, "idle-tpcs"));  // half the GPU is nobody's: the next process takes it
    const StartPlan apart = plan_start(state_with({running(10, TpcMask::range(0, 15))}, true),
                                       Newcomer{1000, "trainer", "", TpcMask::range(16, 31)});
    EXPECT_FALSE(has(apart.findings, "overlap"));
    EXPECT_FALSE(has(apart.findings, "idle-tpcs"));
}

TEST(StartPlan, PartitionsWithoutMpsAreAFinding) {
    const StartPlan plan = plan_start(state_with({running(10, TpcMask::range(0, 15))}, false),
                                      Newcomer{1000, "trainer", "", TpcMask::range(16, 31)});
    EXPECT_TRUE(has(plan.findings, "no-mps"));
}
