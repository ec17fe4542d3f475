#pragma once
// Hand-made pieces of a SystemState for the job rules' tests (test_slurm_jobs, test_job_trust): the built-in
// H200, a partitioned process of a job step, and a planned change of it.
#include <string>

#include "controller/rules.hpp"
#include "controller/system_state.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart::test {

inline const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

// Process `pid` of user `uid` in job step `job` ("" for none), partitioned to `mask`.
inline ProcessState job_process(int pid, const std::string& job, const TpcMask& mask, unsigned uid = 1000) {
    ProcessState p;
    p.pid = pid;
    p.start_time = 100;
    p.uid = uid;
    p.command = "worker";
    p.job = job;
    p.partitioned = true;
    p.mask = mask;
    p.generation = 1;
    return p;
}

inline PlannedChange change_of(const ProcessState& p, const TpcMask& after, bool partitioned = true) {
    PlannedChange c;
    c.pid = p.pid;
    c.start_time = p.start_time;
    c.uid = p.uid;
    c.before_partitioned = p.partitioned;
    c.before = p.mask;
    c.after_partitioned = partitioned;
    c.after = after;
    return c;
}

}  // namespace gpupart::test
