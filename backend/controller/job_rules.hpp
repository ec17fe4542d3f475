#pragma once
// Scheduler jobs and live changes: a change never gives one job's process TPCs that another
// job holds (its reservation, or the masks of its live processes), and a change to a job's process moves
// the job's reservation with it, so later placements respect what the admin did.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/finding.hpp"
#include "controller/rules.hpp"
#include "controller/system_state.hpp"

namespace gpupart {

// "slurm:12" -> "Slurm job 12"; any other name -> "job <name>" (escaped: it comes from a slot).
std::string job_display(std::string_view job);

// The TPCs of the state's GPU that jobs other than `job` ("slurm:12"; "" for a process of no job) hold:
// their reservations and the masks of their live partitioned processes. (Processes of no job are not a
// job's: Controller::free_for counts them.)
TpcMask tpcs_of_other_jobs(const SystemState& state, const std::string& job);

// The refusal of a change that gives a job's process (one with a slot job) TPCs another job holds; an
// unpartitioned process may use every TPC, so making a job's process unpartitioned asks for them all.
// A job whose reservations cannot be read gets a warning instead (its live processes are still checked).
std::vector<Finding> check_job_tpcs(const SystemState& state, const PlannedChange& change);

// Checks each process's job against the job reservations in `state.jobs`: a process naming a job that is
// another user's (GPUPART_JOB is the process's own word) is no job's (job cleared, claimed_job kept); one whose
// job step no longer runs (no live slurmstepd holds it: killed with slurmstepd still alive) is marked
// job_step_gone. Call after state.jobs was read and swept.
void trust_job_claims(SystemState& state);

// What the job rules say of the state: processes naming another user's job, processes of a job step that
// ended, jobs using more TPCs than Slurm gave them.
std::vector<Finding> job_findings(const SystemState& state);

// After `changes` were applied (`after` is the state re-read since): each touched job's reservation on the
// GPU becomes the union of its live processes' masks there. Notes, one line each, for what could not be
// done (not root: the record stays; placements still avoid the TPCs the job's processes use).
std::vector<std::string> follow_job_changes(const std::string& registry_root, const SystemState& after,
                                            const std::vector<PlannedChange>& changes);

}  // namespace gpupart
