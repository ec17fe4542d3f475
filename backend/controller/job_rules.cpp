#include "controller/job_rules.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {

const ProcessState* any_process(const SystemState& state, int pid) {
    if (const ProcessState* here = find_process(state, pid)) return here;
    for (const ProcessState& other : state.elsewhere)
        if (other.pid == pid) return &other;
    return nullptr;
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

std::vector<Finding> check_job_tpcs(const SystemState& state, const PlannedChange& change) {
    std::vector<Finding> findings;
    const ProcessState* process = any_process(state, change.pid);
    if (process == nullptr || process->job.empty()) return findings;
    const std::string job = job_of_step(process->job);
    if (!state.jobs_problem.empty())
        findings.push_back({Severity::warning, "docs/slurm.md (jobs never share TPCs)",
                            fmt::format("the jobs' TPC reservations cannot be read ({}): only their live processes are "
                                        "checked", state.jobs_problem),
                            "job-reservations-unreadable"});
    const TpcMask taken = usable_by(state, change.after_partitioned, change.after) & tpcs_of_other_jobs(state, job);
    if (taken.empty()) return findings;
    findings.push_back(refusal("job-tpcs-taken", "docs/slurm.md (jobs never share TPCs)",
                               fmt::format("process {} of {} would get TPCs {} that {} holds: a job's processes may use "
                                           "their own job's TPCs or free ones (`gpupart slurm jobs` shows who holds which)",
                                           change.pid, job_display(job), taken.to_list(), holder_of(state, job, taken))));
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
            const JobReservationsLock lock(registry_root, after.gpu_uuid);
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
