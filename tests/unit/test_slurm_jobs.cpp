// Slurm's tpc GRES as gpupart reads and writes it, and the job rule on hand-made states over the built-in
// H200. The placement itself, with real processes and the real record, is in tests/registry.
#include <gtest/gtest.h>

#include "controller/job_rules.hpp"
#include "controller/slurm_gres.hpp"
#include "model/user_error.hpp"
#include "job_state_helpers.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using gpupart::test::change_of;
using gpupart::test::h200;
using gpupart::test::job_process;

namespace {

SystemState two_jobs() {
    SystemState state;
    state.gpu = h200();
    state.caller_uid = 0;
    state.caller_admin = true;
    state.processes = {job_process(10, "slurm:1.batch", TpcMask::range(9, 16)), job_process(11, "slurm:2.0", TpcMask::range(18, 25)),
                       job_process(12, "", TpcMask::range(54, 62))};
    // Job 1 holds gpc0 too, between steps: no process of it runs there now.
    JobReservation one{"slurm:1", 1000, TpcMask::range(9, 16) | TpcMask::range(0, 3), 0, 0, {}};
    state.jobs = {one, JobReservation{"slurm:2", 1000, TpcMask::range(18, 25), 0, 0, {}}};
    return state;
}

bool refused(const std::vector<Finding>& findings) {
    return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.id == "job-tpcs-taken" && f.severity == Severity::error; });
}

}  // namespace

TEST(SlurmGres, ReadsTheTpcEntriesOfANodesDetail) {
    EXPECT_EQ(parse_tpc_gres("tpc:gpu0(CNT:16)"), (std::vector<TpcGres>{{"gpu0", 16}}));
    // Slurm splits an untyped request over the types: both GPUs, other resources skipped, IDX commas kept apart.
    EXPECT_EQ(parse_tpc_gres("gpu:a100:2(IDX:0,2),tpc:gpu0(CNT:50),tpc:gpu1(CNT:10)"),
              (std::vector<TpcGres>{{"gpu0", 50}, {"gpu1", 10}}));
    EXPECT_EQ(parse_tpc_gres("tpc:gpu1(CNT:4),tpc:gpu1(CNT:2),tpc:gpu0(CNT:0)"), (std::vector<TpcGres>{{"gpu1", 6}}));
    EXPECT_EQ(parse_tpc_gres("tpc(CNT:8)"), (std::vector<TpcGres>{{"", 8}}));
    EXPECT_EQ(parse_tpc_gres("tpc:gpu0:12"), (std::vector<TpcGres>{{"gpu0", 12}}));
    EXPECT_EQ(parse_tpc_gres("tpc:12"), (std::vector<TpcGres>{{"", 12}}));
    EXPECT_TRUE(parse_tpc_gres("").empty());
    EXPECT_TRUE(parse_tpc_gres("gpu:1(IDX:0)").empty());
    EXPECT_TRUE(parse_tpc_gres("tpcx:gpu0(CNT:3)").empty());  // another resource whose name starts alike
    EXPECT_THROW(parse_tpc_gres("tpc:gpu0(CNT:x)"), UserError);
    EXPECT_THROW(parse_tpc_gres("tpc:gpu0"), UserError);
}

TEST(SlurmGres, TypesNameGpusByIndex) {
    EXPECT_EQ(gpu_index_of_tpc_type("gpu0"), 0);
    EXPECT_EQ(gpu_index_of_tpc_type("gpu13"), 13);
    EXPECT_EQ(gpu_index_of_tpc_type("gpu"), std::nullopt);
    EXPECT_EQ(gpu_index_of_tpc_type("h200"), std::nullopt);
    EXPECT_EQ(gpu_index_of_tpc_type("gpu1x"), std::nullopt);
}

TEST(SlurmGres, TheConfigurationCountsEachGpusRealTpcs) {
    const std::string text = slurm_conf_text({h200()}, "node7", "/p/gpupart_spank.so");
    EXPECT_NE(text.find("NodeName=node7 Name=tpc Type=gpu0 Count=66 Flags=CountOnly  # NVIDIA H200"), std::string::npos);
    EXPECT_NE(text.find("\nGresTypes=tpc\n"), std::string::npos);
    EXPECT_NE(text.find("\nNodeName=node7 Gres=tpc:gpu0:66 "), std::string::npos);
    EXPECT_NE(text.find("\nrequired /p/gpupart_spank.so\n"), std::string::npos);
}

TEST(SlurmGres, AGpuWhoseMaskBitsAreUnknownIsRefusedNotCountedAsZero) {
    Gpu unprobed = h200();
    unprobed.index = 1;
    for (Tpc& tpc : unprobed.tpcs) {
        tpc.mask_bit.reset();
        tpc.mask_bit_note = "run `gpupart probe`: not probed";
    }
    try {
        slurm_conf_text({h200(), unprobed}, "node7", "/p/gpupart_spank.so");
        FAIL() << "a GPU without mask bits was written with a count";
    } catch (const UserError& error) {
        EXPECT_EQ(std::string(error.what()),
                  "GPU 1's TPC mask bits are not known (run `gpupart probe`: not probed), so its tpc Count cannot be "
                  "written: run `gpupart probe --gpu 1` on this node first (gpupart-probe.service probes every GPU at boot)");
    }
}

TEST(SlurmJobs, StepsBelongToTheirJob) {
    EXPECT_EQ(job_of_step("slurm:12.0"), "slurm:12");
    EXPECT_EQ(job_of_step("slurm:12.batch"), "slurm:12");
    EXPECT_EQ(job_of_step("mine"), "mine");
    EXPECT_EQ(job_of_step(""), "");
    EXPECT_EQ(job_display("slurm:12"), "Slurm job 12");
    EXPECT_EQ(job_display("x\x1b[2J"), "job x\\x1b[2J");  // from a slot: escaped
}

TEST(SlurmJobs, OtherJobsHoldTheirReservationsAndTheirProcessesMasks) {
    const SystemState state = two_jobs();
    EXPECT_EQ(tpcs_of_other_jobs(state, "slurm:2").to_list(), "0-3,9-16");
    EXPECT_EQ(tpcs_of_other_jobs(state, "slurm:1").to_list(), "18-25");
    // A process of no job is not a job's: the third process's 54-62 are not counted.
    EXPECT_EQ(tpcs_of_other_jobs(state, "").to_list(), "0-3,9-16,18-25");
}

TEST(SlurmJobs, AJobsProcessNeverGetsAnotherJobsTpcs) {
    const SystemState state = two_jobs();
    const ProcessState& of_two = state.processes[1];
    // Onto job 1's reservation, where no process of job 1 runs now: refused, naming job 1.
    const auto onto_one = check_job_tpcs(state, change_of(of_two, TpcMask::range(0, 3) | TpcMask::range(18, 25)));
    ASSERT_TRUE(refused(onto_one));
    EXPECT_EQ(onto_one.back().message,
              "process 11 of Slurm job 2 would get TPCs 0-3 that Slurm job 1 holds: a job's processes may use their own "
              "job's TPCs or free ones (`gpupart slurm jobs` shows who holds which)");
    // Within its own, onto free TPCs, onto those of a process of no job (the overlap rule warns of that).
    EXPECT_FALSE(refused(check_job_tpcs(state, change_of(of_two, TpcMask::range(18, 21)))));
    EXPECT_FALSE(refused(check_job_tpcs(state, change_of(of_two, TpcMask::range(27, 34)))));
    EXPECT_FALSE(refused(check_job_tpcs(state, change_of(of_two, TpcMask::range(54, 62)))));
    // Unconfined, it could run on every TPC, job 1's included.
    EXPECT_TRUE(refused(check_job_tpcs(state, change_of(of_two, {}, false))));
    // A process of no job may not take a job's TPCs either (Slurm gave them to the job alone); free ones it may.
    EXPECT_TRUE(refused(check_job_tpcs(state, change_of(state.processes[2], TpcMask::range(9, 16)))));
    EXPECT_TRUE(check_job_tpcs(state, change_of(state.processes[2], TpcMask::range(27, 34))).empty());
    // The rule is one of check_change's: every front end's plan gets it.
    EXPECT_TRUE(refused(check_change(state, change_of(of_two, TpcMask::range(9, 16)))));
}

TEST(SlurmJobs, AnUnreadableRecordIsSaidAndLiveProcessesStillCount) {
    SystemState state = two_jobs();
    state.jobs.clear();
    state.jobs_problem = "jobs/GPU-x.json: malformed";
    const ProcessState& of_two = state.processes[1];
    const auto findings = check_job_tpcs(state, change_of(of_two, TpcMask::range(0, 3)));
    ASSERT_EQ(findings.size(), 1u);  // the reservation between steps is not known: not refused
    EXPECT_EQ(findings[0].id, "job-reservations-unreadable");
    EXPECT_TRUE(refused(check_job_tpcs(state, change_of(of_two, TpcMask::range(9, 12)))));  // job 1's live process
}
