#include "controller/job_rules.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "platform/user_names.hpp"

namespace gpupart {
namespace {

const ProcessState* any_process(const SystemState& state, int pid) {
    if (const ProcessState* here = find_process(state, pid)) return here;
    for (const ProcessState& other : state.elsewhere)
        if (other.pid == pid) return &other;
    return nullptr;
}

Finding job_warning(std::string id, std::string rule, std::string message) {
    return {Severity::warning, std::move(rule), std::move(message), std::move(id)};
}

// What a process may run on here: its mask, or every TPC when it has none.
TpcMask usable_by(const SystemState& state, bool partitioned, const TpcMask& mask) {
    return partitioned ? mask & real_tpcs(state.gpu) : real_tpcs(state.gpu);
}

// The first job other than `job` holding any of `tpcs`, for the refusal's words.
std::string holder_of(const SystemState& state, const std::string& job, const TpcMask& tpcs) {
    for (const JobReservation& reservation : state.jobs)
        if (reservation.job != job && !(reservation.tpcs & tpcs).empty()) return job_display(reservation.job);
    for (const ProcessState& process : state.processes)
        if (!process.job.empty() && job_of_step(process.job) != job && process.partitioned && !(process.mask & tpcs).empty())
            return fmt::format("{} (process {})", job_display(job_of_step(process.job)), process.pid);
    return "another job";
}

}  // namespace

std::string job_display(std::string_view job) {
    if (job.starts_with("slurm:")) return "Slurm job " + one_line(job.substr(6), 40);
    return "job " + one_line(job, 40);
}

TpcMask tpcs_of_other_jobs(const SystemState& state, const std::string& job) {
    TpcMask taken;
    for (const JobReservation& reservation : state.jobs)
        if (reservation.job != job) taken |= reservation.tpcs;
    for (const ProcessState& process : state.processes)
        // An unpartitioned process of another job holds nothing of its own (the unpartitioned rule warns of it).
        if (!process.job.empty() && job_of_step(process.job) != job && process.partitioned) taken |= process.mask;
    return taken & real_tpcs(state.gpu);
}

void trust_job_claims(SystemState& state) {
    for (auto* list : {&state.processes, &state.elsewhere})
        for (ProcessState& process : *list) {
            if (process.job.empty()) continue;
            const std::string job = job_of_step(process.job);
            const auto reservation = std::find_if(state.jobs.begin(), state.jobs.end(), [&](const JobReservation& r) { return r.job == job; });
            if (reservation == state.jobs.end()) continue;  // a job gpupart did not place here: nothing to check it against
            if (reservation->uid != process.uid) {
                process.claimed_job = process.job;
                process.job.clear();
                continue;
            }
            // The record's holders were swept: a step whose slurmstepd is gone has none left.
            process.job_step_gone = std::none_of(reservation->holders.begin(), reservation->holders.end(),
                                                 [&](const JobHolder& holder) { return holder.step == process.job; });
        }
}

namespace {

const JobReservation* reservation_of(const SystemState& state, const std::string& job) {
    for (const JobReservation& reservation : state.jobs)
        if (reservation.job == job) return &reservation;
    return nullptr;
}

// The TPCs job `job`'s processes use after `change` (the change's process with its new mask).
TpcMask job_tpcs_after(const SystemState& state, const std::string& job, const PlannedChange& change) {
    TpcMask tpcs;
    bool changed_seen = false;
    for (const auto* list : {&state.processes, &state.elsewhere})
        for (const ProcessState& process : *list) {
            if (process.job.empty() || job_of_step(process.job) != job) continue;
            const bool changed = process.pid == change.pid;
            changed_seen = changed_seen || changed;
            if (list == &state.elsewhere && !changed) continue;  // on other GPUs only: none of this GPU's TPCs
            tpcs |= changed ? usable_by(state, change.after_partitioned, change.after)
                            : usable_by(state, process.partitioned, process.mask);
        }
    if (!changed_seen) tpcs |= usable_by(state, change.after_partitioned, change.after);
    return tpcs;
}

Finding over_allocation(const std::string& job, const TpcMask& tpcs, int allocated) {
    return job_warning("job-over-allocation", "docs/slurm.md (a job stays within its allocation)",
                   fmt::format("{} uses {} TPCs here ({}), {} more than the {} Slurm gave it: Slurm still counts {}, so a "
                               "job it starts here later may find too few free and fail", job_display(job), tpcs.count(),
                               tpcs.to_list(), tpcs.count() - allocated, allocated, allocated));
}

// Beyond what Slurm gave the job: refused for a user (the job's allocation is the admin's to change, and a
// user cannot move the reservation with it), a warning for root (Slurm keeps counting the allocation).
void check_allocation(const SystemState& state, const PlannedChange& change, const std::string& job, std::vector<Finding>& findings) {
    const JobReservation* reservation = reservation_of(state, job);
    if (reservation == nullptr) return;
    const TpcMask after = job_tpcs_after(state, job, change);
    if (state.caller_uid != 0) {
        const TpcMask outside = after & ~reservation->tpcs;
        if (!outside.empty())
            findings.push_back(refusal("job-allocation", "docs/slurm.md (a job stays within its allocation)",
                                       fmt::format("process {} of {} would use TPCs {} outside the {} TPCs the job was given "
                                                   "({}): a job's processes stay within its allocation; only root may grow a "
                                                   "job beyond it", change.pid, job_display(job), outside.to_list(),
                                                   reservation->tpcs.count(), reservation->tpcs.to_list())));
        return;
    }
    if (reservation->allocated > 0 && after.count() > reservation->allocated)
        findings.push_back(over_allocation(job, after, reservation->allocated));
}

}  // namespace

std::vector<Finding> job_findings(const SystemState& state) {
    std::vector<Finding> findings;
    for (const ProcessState& process : state.processes) {
        if (!process.claimed_job.empty()) {
            const JobReservation* reservation = reservation_of(state, job_of_step(process.claimed_job));
            findings.push_back(job_warning("job-claim-refused", "docs/slurm.md (jobs never share TPCs)",
                                       fmt::format("process {} of {} names {} (GPUPART_JOB), which is {}'s: it is treated as "
                                                   "no job's, and its TPCs are not that job's", process.pid,
                                                   user_name(process.uid), job_display(job_of_step(process.claimed_job)),
                                                   reservation ? user_name(reservation->uid) : "another user")));
        }
        if (process.job_step_gone)
            findings.push_back(job_warning("job-step-gone", "docs/slurm.md (when a job's step ends)",
                                       fmt::format("process {} ({}) of {} runs on after its job step ended (its slurmstepd is "
                                                   "gone): it keeps {} while Slurm counts them free; end it (kill {})",
                                                   process.pid, one_line(process.command, 40),
                                                   job_display(job_of_step(process.job)),
                                                   process.partitioned ? "TPCs " + process.mask.to_list() : "the whole GPU",
                                                   process.pid)));
    }
    for (const JobReservation& reservation : state.jobs)
        if (reservation.allocated > 0 && reservation.tpcs.count() > reservation.allocated)
            findings.push_back(over_allocation(reservation.job, reservation.tpcs, reservation.allocated));
    return findings;
}

std::vector<Finding> check_job_tpcs(const SystemState& state, const PlannedChange& change) {
    std::vector<Finding> findings;
    const ProcessState* process = any_process(state, change.pid);
    if (process == nullptr) return findings;
    // A process of no job may not take a job's TPCs either: Slurm gave them to the job alone.
    const std::string job = process->job.empty() ? std::string() : job_of_step(process->job);
    if (!job.empty()) {
        if (!state.jobs_problem.empty())
            findings.push_back({Severity::warning, "docs/slurm.md (jobs never share TPCs)",
                                fmt::format("the jobs' TPC reservations cannot be read ({}): only their live processes are "
                                            "checked", state.jobs_problem),
                                "job-reservations-unreadable"});
        check_allocation(state, change, job, findings);
    }
    const TpcMask taken = usable_by(state, change.after_partitioned, change.after) & tpcs_of_other_jobs(state, job);
    if (taken.empty()) return findings;
    findings.push_back(refusal("job-tpcs-taken", "docs/slurm.md (jobs never share TPCs)",
                               job.empty()
                                   ? fmt::format("process {} (of no job) would get TPCs {} that {} holds: a process of no "
                                                 "job may use free TPCs only (`gpupart slurm jobs` shows who holds which)",
                                                 change.pid, taken.to_list(), holder_of(state, job, taken))
                                   : fmt::format("process {} of {} would get TPCs {} that {} holds: a job's processes may "
                                                 "use their own job's TPCs or free ones (`gpupart slurm jobs` shows who "
                                                 "holds which)", change.pid, job_display(job), taken.to_list(),
                                                 holder_of(state, job, taken))));
    return findings;
}

std::vector<std::string> follow_job_changes(const std::string& registry_root, const SystemState& after,
                                            const std::vector<PlannedChange>& changes) {
    std::set<std::string> touched;
    for (const PlannedChange& change : changes)
        if (const ProcessState* process = any_process(after, change.pid); process != nullptr && !process->job.empty())
            touched.insert(job_of_step(process->job));
    std::vector<std::string> notes;
    for (const std::string& job : touched) {
        const auto reserved = std::find_if(after.jobs.begin(), after.jobs.end(), [&](const JobReservation& r) { return r.job == job; });
        if (reserved == after.jobs.end()) continue;  // a job gpupart did not place here: nothing to follow
        TpcMask now;
        for (const ProcessState& process : after.processes)
            if (job_of_step(process.job) == job) now |= usable_by(after, process.partitioned, process.mask);
        if (now.empty() || now == reserved->tpcs) continue;
        try {
            const JobReservationsLock lock(registry_root, after.gpu_uuid, numberings_of({after.gpu}));
            std::vector<JobReservation> jobs = lock.read();
            for (JobReservation& reservation : jobs)
                if (reservation.job == job) reservation.tpcs = now;
            lock.write(jobs);
        } catch (const UserError& error) {
            notes.push_back(fmt::format("{} keeps TPCs {} in its reservation on this GPU ({}); placements still avoid the "
                                        "TPCs its processes use", job_display(job), reserved->tpcs.to_list(), one_line(error.what())));
        }
    }
    return notes;
}

}  // namespace gpupart
