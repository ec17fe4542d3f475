// What the job rules make of a job's own user, another user naming the job, a step whose slurmstepd is
// gone, and processes no gpupart mask holds: hand-made states over the built-in H200.
#include <algorithm>

#include <gtest/gtest.h>

#include "controller/job_rules.hpp"
#include "controller/rules.hpp"
#include "job_state_helpers.hpp"

using namespace gpupart;
using gpupart::test::change_of;
using gpupart::test::h200;
using gpupart::test::job_process;

namespace {

// Job 7 of user 1000 was given 16 TPCs (9-16 and 18-25); its batch step's slurmstepd holds them.
SystemState one_job(unsigned caller) {
    SystemState state;
    state.gpu = h200();
    state.caller_uid = caller;
    state.caller_admin = caller == 0;
    state.processes = {job_process(10, "slurm:7.batch", TpcMask::range(9, 16) | TpcMask::range(18, 25), 1000)};
    state.jobs = {JobReservation{"slurm:7", 1000, TpcMask::range(9, 16) | TpcMask::range(18, 25), 16, 0,
                                 {JobHolder{4242, 1, "slurm:7.batch"}}}};
    return state;
}

const Finding* find(const std::vector<Finding>& findings, const std::string& id) {
    const auto it = std::find_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; });
    return it == findings.end() ? nullptr : &*it;
}

}  // namespace

TEST(JobTrust, AUserCannotGrowAJobBeyondItsAllocation) {
    const SystemState state = one_job(1000);
    const auto grown = check_job_tpcs(state, change_of(state.processes[0], TpcMask::range(9, 16) | TpcMask::range(18, 29)));
    const Finding* refusal = find(grown, "job-allocation");
    ASSERT_NE(refusal, nullptr);
    EXPECT_EQ(refusal->severity, Severity::error);
    // TPC numbers are dense (0-65 on the H200): 26-29 are all real TPCs outside the job's.
    EXPECT_EQ(refusal->message, "process 10 of Slurm job 7 would use TPCs 26-29 outside the 16 TPCs the job was given "
                                "(9-16,18-25): a job's processes stay within its allocation; only root may grow a job beyond it");
    // Within the job's TPCs: nothing to say.
    const auto within = check_job_tpcs(state, change_of(state.processes[0], TpcMask::range(9, 16)));
    EXPECT_EQ(find(within, "job-allocation"), nullptr);
    // Moving onto free TPCs (same count) needs the reservation to move: a user cannot write it.
    const auto moved = check_job_tpcs(state, change_of(state.processes[0], TpcMask::range(45, 60)));
    EXPECT_NE(find(moved, "job-allocation"), nullptr);
}

TEST(JobTrust, RootMayGrowAJobAndIsToldSlurmStillCountsItsAllocation) {
    const SystemState state = one_job(0);
    const auto grown = check_job_tpcs(state, change_of(state.processes[0], TpcMask::range(9, 16) | TpcMask::range(18, 29)));
    EXPECT_EQ(find(grown, "job-allocation"), nullptr);
    const Finding* warned = find(grown, "job-over-allocation");
    ASSERT_NE(warned, nullptr);
    EXPECT_EQ(warned->severity, Severity::warning);
    EXPECT_NE(warned->message.find("20 TPCs here (9-16,18-29), 4 more than the 16 Slurm gave it: Slurm still counts 16"),
              std::string::npos) << warned->message;
}

TEST(JobTrust, AProcessNamingAnotherUsersJobIsNoJobs) {
    SystemState state = one_job(2000);
    state.processes.push_back(job_process(20, "slurm:7.0", TpcMask::range(0, 1), 2000));
    trust_job_claims(state);
    EXPECT_EQ(state.processes[0].job, "slurm:7.batch");  // the job's own user's: kept
    EXPECT_EQ(state.processes[1].job, "");
    EXPECT_EQ(state.processes[1].claimed_job, "slurm:7.0");
    // As no job's, it may not take job 7's TPCs.
    const auto onto = check_job_tpcs(state, change_of(state.processes[1], TpcMask::range(9, 16)));
    const Finding* taken = find(onto, "job-tpcs-taken");
    ASSERT_NE(taken, nullptr);
    EXPECT_EQ(taken->message, "process 20 (of no job) would get TPCs 9-16 that Slurm job 7 holds: a process of no job may "
                              "use free TPCs only (`gpupart slurm jobs` shows who holds which)");
    EXPECT_NE(find(job_findings(state), "job-claim-refused"), nullptr);
}

TEST(JobTrust, AProcessWhoseStepHasNoLiveHolderRunsOnAfterItsStep) {
    SystemState state = one_job(0);
    state.processes.push_back(job_process(30, "slurm:7.0", TpcMask::range(9, 16), 1000));  // step 0: no holder left
    trust_job_claims(state);
    EXPECT_FALSE(state.processes[0].job_step_gone);
    EXPECT_TRUE(state.processes[1].job_step_gone);
    const std::vector<Finding> findings = job_findings(state);
    const Finding* gone = find(findings, "job-step-gone");
    ASSERT_NE(gone, nullptr);
    EXPECT_NE(gone->message.find("process 30 (worker) of Slurm job 7 runs on after its job step ended"), std::string::npos)
        << gone->message;
    // A process of a job gpupart did not place (no reservation) is not judged.
    SystemState other = one_job(0);
    other.processes.push_back(job_process(31, "slurm:8.0", TpcMask::range(0, 3), 1000));
    trust_job_claims(other);
    EXPECT_FALSE(other.processes[1].job_step_gone);
}

TEST(JobTrust, ProcessesNoMaskHoldsAreSaidOnAPartitionedGpu) {
    SystemState state = one_job(0);
    state.unconfined = {UnconfinedProcess{555, 1000, "python train.py"}};
    const std::vector<Finding> findings = check_result(state);
    const Finding* unconfined = find(findings, "unconfined");
    ASSERT_NE(unconfined, nullptr);
    EXPECT_NE(unconfined->message.find("process 555 ("), std::string::npos) << unconfined->message;
    EXPECT_NE(unconfined->message.find("python train.py) uses the GPU without a gpupart partition"), std::string::npos);
    // Nobody partitioned, no job: nothing to run over.
    SystemState bare;
    bare.gpu = h200();
    bare.unconfined = state.unconfined;
    EXPECT_EQ(find(check_result(bare), "unconfined"), nullptr);
}
