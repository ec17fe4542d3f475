#pragma once
// Placing a scheduler job's TPCs on a GPU and giving them back (the Slurm plugin's helper,
// `gpupart slurm place|release`). The reservation record (registry/job_reservations.hpp) is read,
// changed and written under the GPU's lock, so jobs starting at the same moment never get the same TPC.
// TPCs belong to the job: every step of a job on a node shares the job's TPCs on each GPU; the record
// names the steps (their slurmstepd) using them, and is dropped when the last one ends.
#include <string>
#include <vector>

#include "controller/system_state.hpp"
#include "registry/job_reservations.hpp"

namespace gpupart {

struct JobStep {
    std::string step;  // "slurm:<job>.<step>": the job is job_of_step(step)
    unsigned uid = 0;  // the job's user
    JobHolder holder;  // the slurmstepd running the step (holder.step == step)
};

struct JobPlacement {
    TpcMask tpcs;
    bool joined = false;             // the job held these TPCs already (placed for an earlier step of it)
    std::vector<std::string> notes;  // for the job: it was resized live; one line each
    std::vector<std::string> swept;  // for the node's log: stale reservations of other jobs dropped on the way
    SystemState state;               // the GPU as gathered under the lock, the job's reservation included
};

// `count` TPCs for the job of `step` on `gpu`, GPC-packed (place_tpcs_packed), on TPCs that no other
// job (reservation or live partitioned process) and no partitioned process of no job holds. A job that
// holds TPCs here already gets those. Throws UserError (one line naming who holds what) when too few are
// free, and RegistryError when the record cannot be used.
JobPlacement place_job(const Registry& registry, const Gpu& gpu, const JobStep& step, int count);

// Takes `holder` off every GPU's record and drops what is stale; one line for each reservation dropped.
// Waits up to `wait_ms` for the processes of the holder's steps to be gone first (tasks just signalled
// take a moment to exit); a job with a process still alive keeps its TPCs until a later sweep.
std::vector<std::string> release_job_step(const Registry& registry, const JobHolder& holder, int wait_ms = 0);

// Drops, in place, the holders that are not alive, then the reservations left with no holder whose job
// has no live process in `entries` (a slurmstepd killed with its tasks). One line for each dropped.
std::vector<std::string> sweep_stale_jobs(std::vector<JobReservation>& jobs, const std::vector<RegistryEntry>& entries);

}  // namespace gpupart
