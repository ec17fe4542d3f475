// Slurm jobs' TPCs with the real reservation record, real processes as the steps' slurmstepd
// and as the jobs' registered processes, concurrent placements in forked processes, and the controller.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/controller.hpp"
#include "controller/job_placement.hpp"
#include "controller_test_fixture.hpp"
#include "model/placement.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "platform/process_identity.hpp"
#include "registry_test_support.hpp"

using namespace gpupart;
using gpupart::test::builtin_h200;
using gpupart::test::kTestGpu;
using gpupart::test::RegisteredChild;

namespace {

struct JobPlacementTest : gpupart::test::ControllerFixture {
    Registry registry() const { return Registry(registry_dir.dir); }
    // The test process itself: a live "slurmstepd" for the steps it places.
    static JobStep step(const std::string& name, int pid = ::getpid()) {
        // The job's user is the test's: its tasks (the registered children) run as the job's user.
        return JobStep{name, ::getuid(), JobHolder{pid, process_start_time(pid).value_or(0), name}};
    }
    std::vector<JobReservation> record() const { return read_job_reservations(registry_dir.dir, kTestGpu); }
    const JobReservation* find(const std::vector<JobReservation>& jobs, const std::string& job) const {
        for (const JobReservation& r : jobs)
            if (r.job == job) return &r;
        return nullptr;
    }
};

// A process that exited (reaped): its pid and start time name nobody now.
JobStep gone_step(const std::string& name) {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    const auto start = process_start_time(child);
    ::waitpid(child, nullptr, 0);
    return JobStep{name, ::getuid(), JobHolder{child, start.value_or(1), name}};
}

}  // namespace

TEST_F(JobPlacementTest, TheRecordRoundTripsAndIsListedByGpu) {
    {
        const JobReservationsLock lock(registry_dir.dir, kTestGpu);
        EXPECT_TRUE(lock.read().empty());
        lock.write({JobReservation{"slurm:7", 1000, TpcMask::range(9, 16), 8, 42, {JobHolder{123, 456, "slurm:7.batch"}}}});
    }
    const auto jobs = record();
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0], (JobReservation{"slurm:7", 1000, TpcMask::range(9, 16), 8, 42, {JobHolder{123, 456, "slurm:7.batch"}}}));
    EXPECT_EQ(job_reservation_gpus(registry_dir.dir), std::vector<std::string>{kTestGpu});
    EXPECT_TRUE(read_job_reservations(registry_dir.dir, "GPU-00000000-0000-0000-0000-000000000002").empty());
    EXPECT_EQ(job_reservations_directory("/dev/shm"), "/dev/shm/gpupart-jobs");
}

TEST_F(JobPlacementTest, AnUntrustedRecordIsRefusedInOneLine) {
    const std::string dir = job_reservations_directory(registry_dir.dir);
    std::filesystem::create_directory(dir);
    const std::string path = dir + "/" + kTestGpu + ".json";
    EXPECT_THROW(JobReservationsLock(registry_dir.dir, "../x"), RegistryError);  // a UUID names a file, never a path
    std::ofstream(path) << "{\"version\": 3, \"gpu\": \"" << kTestGpu << "\", \"jobs\": []}";
    try {
        record();
        FAIL() << "another version was read";
    } catch (const RegistryError& error) {
        EXPECT_NE(std::string(error.what()).find("not version 2 of the record"), std::string::npos) << error.what();
    }
    std::ofstream(path) << "{\"version\": 2, \"gpu\": \"" << kTestGpu << "\", \"jobs\": [{\"job\": 3}]}";
    try {
        record();
        FAIL() << "a malformed record was read";
    } catch (const RegistryError& error) {
        EXPECT_NE(std::string(error.what()).find(": malformed ("), std::string::npos) << error.what();
    }
    std::filesystem::remove(path);
    ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);  // a FIFO never blocks the reader
    EXPECT_THROW(record(), UserError);
    std::filesystem::remove(path);
    ::chmod(dir.c_str(), 0777);  // anybody could plant a record
    EXPECT_THROW(record(), RegistryError);
    if (::geteuid() != 0) {
        EXPECT_THROW(JobReservationsLock(registry_dir.dir, kTestGpu), RegistryError);
    } else {  // root (the plugin's helper) moves such a directory aside and makes its own
        std::ofstream(dir + "/" + kTestGpu + ".json") << "{\"version\": 2, \"gpu\": \"" << kTestGpu << "\", \"jobs\": []}";
        { const JobReservationsLock lock(registry_dir.dir, kTestGpu); }
        struct stat info {};
        ASSERT_EQ(::lstat(dir.c_str(), &info), 0);
        EXPECT_EQ(info.st_mode & 07777, 0755u);
        EXPECT_TRUE(record().empty());  // the planted record went aside with its directory
        bool aside = false;
        for (const auto& item : std::filesystem::directory_iterator(registry_dir.dir))
            aside = aside || item.path().filename().string().starts_with("jobs.untrusted-uid0-");
        EXPECT_TRUE(aside);
    }
}

// A record written before gpupart used TPC numbers (version 1) holds launch-descriptor bits: read through
// the GPU's map it names the same TPCs; without the map it is refused in one line, never read as numbers.
TEST_F(JobPlacementTest, ARecordFromBeforeTpcNumbersIsReadThroughTheMapOrRefused) {
    const std::string dir = job_reservations_directory(registry_dir.dir);
    std::filesystem::create_directory(dir);
    const std::string path = dir + "/" + kTestGpu + ".json";
    std::ofstream(path) << "{\"version\": 1, \"gpu\": \"" << kTestGpu << "\", \"jobs\": [{\"job\": \"slurm:5\", \"uid\": "
                        << ::getuid() << ", \"tpcs\": \"0x1fe00\", \"since_realtime_ns\": 1, \"allocated\": 8, \"holders\": []}]}";
    try {
        record();
        FAIL() << "a record in descriptor bits was read without the GPU's map";
    } catch (const RegistryError& error) {
        EXPECT_NE(std::string(error.what()).find("from before TPC numbers, in launch-descriptor bits"), std::string::npos) << error.what();
        EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos);
    }
    const auto jobs = read_job_reservations(registry_dir.dir, kTestGpu, numberings_of({builtin_h200()}));
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].job, "slurm:5");
    EXPECT_EQ(jobs[0].tpcs.to_list(), "1,9,17,25,32,39,46,53");  // bits 9-16: gpc1
    EXPECT_EQ(jobs[0].allocated, 8);
}

TEST_F(JobPlacementTest, JobsGetDisjointGpcPackedTpcsAndQueueWhenFull) {
    const Gpu& gpu = builtin_h200();
    const JobPlacement one = place_job(registry(), gpu, step("slurm:1.batch"), 16);
    EXPECT_FALSE(one.joined);
    EXPECT_EQ(one.tpcs, place_tpcs_packed(gpu, 16, real_tpcs(gpu)));  // gpupart's own packing, on the empty GPU
    const JobPlacement two = place_job(registry(), gpu, step("slurm:2.0"), 40);
    EXPECT_EQ(two.tpcs.count(), 40);
    EXPECT_TRUE((one.tpcs & two.tpcs).empty());
    EXPECT_EQ(two.tpcs, place_tpcs_packed(gpu, 40, real_tpcs(gpu) & ~one.tpcs));
    try {
        place_job(registry(), gpu, step("slurm:3.batch"), 11);
        FAIL() << "11 TPCs were placed where 10 are free";
    } catch (const UserError& error) {
        EXPECT_EQ(std::string(error.what()),
                  "Slurm job 3 asks 11 TPCs on GPU 0 (NVIDIA H200) but only 10 are free: Slurm job 1 holds 16 (" +
                      one.tpcs.to_list() + "); Slurm job 2 holds 40 (" + two.tpcs.to_list() + ")");
    }
    EXPECT_EQ(record().size(), 2u);  // the refused job left nothing
    EXPECT_THROW(place_job(registry(), gpu, step("slurm:4.0"), 67), UserError);
    EXPECT_THROW(place_job(registry(), gpu, step("slurm:4"), 1), UserError);  // not a step
}

TEST_F(JobPlacementTest, AJobsStepsShareItsTpcs) {
    const Gpu& gpu = builtin_h200();
    const JobPlacement batch = place_job(registry(), gpu, step("slurm:5.batch"), 8);
    RegisteredChild other_stepd(registry_dir.dir, nullptr);
    const JobPlacement srun = place_job(registry(), gpu, step("slurm:5.0", other_stepd.pid), 8);
    EXPECT_TRUE(srun.joined);
    EXPECT_EQ(srun.tpcs, batch.tpcs);
    ASSERT_EQ(record().size(), 1u);
    EXPECT_EQ(record()[0].holders.size(), 2u);
    // The batch step ends: the job keeps its TPCs while step 0 runs; then step 0 ends too.
    EXPECT_TRUE(release_job_step(registry(), step("slurm:5.batch").holder).empty());
    ASSERT_EQ(record().size(), 1u);
    EXPECT_EQ(record()[0].holders, std::vector<JobHolder>{step("slurm:5.0", other_stepd.pid).holder});
    const auto lines = release_job_step(registry(), step("slurm:5.0", other_stepd.pid).holder);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0], "Slurm job 5: TPCs " + batch.tpcs.to_list() + " released (none of its steps and processes runs here "
                        "any more) on " + kTestGpu);
    EXPECT_TRUE(record().empty());
}

TEST_F(JobPlacementTest, AKilledSlurmstepdsTpcsAreSweptUnlessItsProcessesRun) {
    const Gpu& gpu = builtin_h200();
    const JobPlacement dead = place_job(registry(), gpu, gone_step("slurm:8.batch"), 16);
    // Front ends see job 8's TPCs as free already; the next placement drops them from the record.
    EXPECT_EQ(record().size(), 1u);
    EXPECT_TRUE(make().state().jobs.empty());
    const JobPlacement still_running = place_job(registry(), gpu, gone_step("slurm:9.batch"), 16);
    EXPECT_EQ(still_running.swept, std::vector<std::string>{"Slurm job 8: TPCs " + dead.tpcs.to_list() +
                                                             " released (none of its steps and processes runs here any more)"});
    EXPECT_EQ(still_running.tpcs, dead.tpcs);  // the first 16 again
    RegisteredChild task_of_nine(registry_dir.dir, still_running.tpcs.to_hex().c_str(), kTestGpu, "slurm:9.batch");
    const JobPlacement next = place_job(registry(), gpu, step("slurm:10.batch"), 8);
    EXPECT_TRUE(next.swept.empty());  // job 9's task still runs on its TPCs
    const auto jobs = record();
    EXPECT_EQ(find(jobs, "slurm:8"), nullptr);
    ASSERT_NE(find(jobs, "slurm:9"), nullptr);
    EXPECT_TRUE(find(jobs, "slurm:9")->holders.empty());
    EXPECT_TRUE((next.tpcs & still_running.tpcs).empty());
    task_of_nine.finish();
    EXPECT_EQ(release_job_step(registry(), JobHolder{}).size(), 1u);  // a sweep alone: job 9 goes now
    EXPECT_EQ(find(record(), "slurm:9"), nullptr);
    EXPECT_NE(find(record(), "slurm:10"), nullptr);
}

TEST_F(JobPlacementTest, ConcurrentJobStartsNeverShareATpc) {
    const Gpu& gpu = builtin_h200();
    constexpr int kJobs = 8;  // 8 x 8 of 66 TPCs, all at once
    std::vector<pid_t> children;
    int go[2], placed[2], hold[2];
    ASSERT_EQ(::pipe(go), 0);
    ASSERT_EQ(::pipe(placed), 0);
    ASSERT_EQ(::pipe(hold), 0);
    for (int i = 0; i < kJobs; ++i) {
        const pid_t child = ::fork();
        if (child == 0) {
            ::close(go[1]);
            ::close(placed[0]);
            ::close(hold[1]);
            char byte = 'n';
            if (::read(go[0], &byte, 1) != 0) ::_exit(3);  // all start when the parent closes the pipe
            try {
                place_job(Registry(registry_dir.dir), gpu, step("slurm:" + std::to_string(100 + i) + ".batch"), 8);
                byte = 'y';
            } catch (const UserError&) {
            }
            if (::write(placed[1], &byte, 1) != 1) ::_exit(3);
            // Each is its job's slurmstepd: alive until every job is placed, so none is swept as stale.
            while (::read(hold[0], &byte, 1) > 0) {
            }
            ::_exit(0);
        }
        children.push_back(child);
    }
    ::close(go[0]);
    ::close(placed[1]);
    ::close(hold[0]);
    ::close(go[1]);
    int ok = 0;
    for (int i = 0; i < kJobs; ++i) {
        char byte = 'n';
        ASSERT_EQ(::read(placed[0], &byte, 1), 1);
        ok += byte == 'y';
    }
    EXPECT_EQ(ok, kJobs);
    const auto jobs = record();
    ::close(hold[1]);
    for (pid_t child : children) ::waitpid(child, nullptr, 0);
    ::close(placed[0]);
    ASSERT_EQ(jobs.size(), static_cast<std::size_t>(kJobs));
    TpcMask all;
    for (const JobReservation& job : jobs) {
        EXPECT_EQ(job.tpcs.count(), 8);
        EXPECT_TRUE((all & job.tpcs).empty()) << job.job;
        all |= job.tpcs;
    }
}

TEST_F(JobPlacementTest, LiveChangesKeepJobsApartAndMoveTheirReservations) {
    const Gpu& gpu = builtin_h200();
    const JobPlacement one = place_job(registry(), gpu, step("slurm:1.batch"), 16);
    const JobPlacement two = place_job(registry(), gpu, step("slurm:2.batch"), 8);
    RegisteredChild a(registry_dir.dir, one.tpcs.to_hex().c_str(), kTestGpu, "slurm:1.batch");
    RegisteredChild b(registry_dir.dir, two.tpcs.to_hex().c_str(), kTestGpu, "slurm:2.batch");
    RegisteredChild loose(registry_dir.dir, nullptr);  // a process of no job
    Controller controller = make();
    // Onto job 1's TPCs: refused, whatever front end asks.
    const Plan onto = controller.plan_masks({{b.pid, one.tpcs}}, "drag");
    ASSERT_TRUE(onto.refused());
    EXPECT_TRUE(std::any_of(onto.findings.begin(), onto.findings.end(), [](const Finding& f) { return f.id == "job-tpcs-taken"; }));
    // By count: placed on TPCs no other job holds, beside its own.
    const Plan grow = controller.plan_set({{b.pid, "16 tpcs"}}, "set 16 tpcs");
    ASSERT_FALSE(grow.refused());
    EXPECT_TRUE((grow.changes[0].after & one.tpcs).empty());
    const Applied applied = controller.apply(grow);
    EXPECT_TRUE(applied.notes.empty());
    EXPECT_EQ(find(record(), "slurm:2")->tpcs, grow.changes[0].after);  // the reservation followed
    // A process of no job may not take a job's TPCs either: Slurm gave them to the job alone.
    EXPECT_TRUE(controller.plan_masks({{loose.pid, one.tpcs}}, "drag").refused());
    // Job 1's process ends: its reservation still holds its TPCs between steps. (Killed: the children forked
    // after it hold its pipe too, so closing ours alone would not end it.)
    ::kill(a.pid, SIGKILL);
    a.finish();
    controller.refresh();
    EXPECT_TRUE(controller.plan_masks({{b.pid, one.tpcs}}, "drag").refused());
    EXPECT_TRUE((controller.free_for(loose.pid) & one.tpcs).empty());
}
