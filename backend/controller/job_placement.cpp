#include "controller/job_placement.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "controller/job_rules.hpp"
#include "model/gpu_queries.hpp"
#include "model/placement.hpp"
#include "model/user_error.hpp"
#include "platform/process_identity.hpp"

namespace gpupart {
namespace {

std::uint64_t realtime_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// A live process of the job: one that names it and is its user's (any user can name any job in GPUPART_JOB).
bool job_has_live_process(const std::vector<RegistryEntry>& entries, const JobReservation& reservation) {
    return std::any_of(entries.begin(), entries.end(), [&](const RegistryEntry& entry) {
        return entry.record && entry.liveness == Liveness::alive && !entry.record->job.empty() &&
               job_of_step(entry.record->job) == reservation.job && entry.record->uid == reservation.uid &&
               entry.record->file_owner == reservation.uid;
    });
}

// ", 30 more than the 16 Slurm gave it (grown live; its processes 812, 813)" for a job grown beyond its allocation.
std::string overrun_text(const SystemState& state, const JobReservation& reservation) {
    if (reservation.allocated <= 0 || reservation.tpcs.count() <= reservation.allocated) return "";
    std::vector<int> pids;
    for (const ProcessState& process : state.processes)
        if (!process.job.empty() && job_of_step(process.job) == reservation.job) pids.push_back(process.pid);
    return fmt::format(", {} more than the {} Slurm gave it (grown live{})", reservation.tpcs.count() - reservation.allocated,
                       reservation.allocated, pids.empty() ? "" : fmt::format("; its process{} {}", pids.size() == 1 ? "" : "es",
                                                                                   fmt::join(pids, ", ")));
}

// Who holds the TPCs a job cannot have, in a few words each: for the refusal.
std::string holders_text(const SystemState& state, const std::string& job) {
    std::vector<std::string> parts;
    for (const JobReservation& reservation : state.jobs)
        if (reservation.job != job)
            parts.push_back(fmt::format("{} holds {} ({}{})", job_display(reservation.job), reservation.tpcs.count(),
                                        reservation.tpcs.to_list(), overrun_text(state, reservation)));
    for (const ProcessState& process : state.processes)
        if (process.partitioned && job_of_step(process.job) != job &&
            std::none_of(state.jobs.begin(), state.jobs.end(),
                         [&](const JobReservation& r) { return !process.job.empty() && r.job == job_of_step(process.job); }))
            parts.push_back(fmt::format("process {} ({}{}) holds {}", process.pid, one_line(process.command, 30),
                                        process.job.empty() ? ", no job" : ", " + job_display(job_of_step(process.job)),
                                        process.mask.to_list()));
    if (parts.size() > 4) {
        const std::size_t more = parts.size() - 3;
        parts.resize(3);
        parts.push_back(fmt::format("{} more (`gpupart slurm jobs`, `gpupart list`)", more));
    }
    return parts.empty() ? "nothing else is known to hold any" : fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

std::vector<std::string> sweep_stale_jobs(std::vector<JobReservation>& jobs, const std::vector<RegistryEntry>& entries) {
    std::vector<std::string> lines;
    std::erase_if(jobs, [&](JobReservation& reservation) {
        std::erase_if(reservation.holders, [](const JobHolder& holder) {
            return holder.pid <= 0 || process_liveness(holder.pid, holder.start_time) != Liveness::alive;
        });
        if (!reservation.holders.empty() || job_has_live_process(entries, reservation)) return false;
        lines.push_back(fmt::format("{}: TPCs {} released (none of its steps and processes runs here any more)",
                                    job_display(reservation.job), reservation.tpcs.to_list()));
        return true;
    });
    return lines;
}

JobPlacement place_job(const Registry& registry, const Gpu& gpu, const JobStep& step, int count) {
    const std::string job = job_of_step(step.step);
    if (job.empty() || job == step.step || step.holder.step != step.step)
        throw UserError(fmt::format("'{}' is not a job step (\"slurm:<job>.<step>\")", one_line(step.step, 64)));
    const TpcMask real = real_tpcs(gpu);
    if (count <= 0) throw UserError(fmt::format("{} asks {} TPCs: a TPC count must be at least 1", job_display(job), count));
    if (count > real.count())
        throw UserError(fmt::format("{} asks {} TPCs but {} has {}: the gres.conf Count of its tpc type is wrong "
                                    "(`gpupart slurm conf` prints the right one)", job_display(job), count, gpu_display_name(gpu),
                                    real.count()));
    JobPlacement placed;
    const JobReservationsLock lock(registry.directory(), gpu_key(gpu), numberings_of({gpu}));
    std::vector<JobReservation> jobs = lock.read();
    const std::vector<RegistryEntry> entries = registry.list();
    placed.swept = sweep_stale_jobs(jobs, entries);
    placed.state = gather_state(entries, gpu);
    placed.state.jobs = jobs;
    trust_job_claims(placed.state);
    const auto mine = std::find_if(jobs.begin(), jobs.end(), [&](const JobReservation& r) { return r.job == job; });
    if (mine != jobs.end()) {
        // Another step of the job placed them: the job's TPCs are shared by its steps.
        if (std::find(mine->holders.begin(), mine->holders.end(), step.holder) == mine->holders.end())
            mine->holders.push_back(step.holder);
        placed.tpcs = mine->tpcs;
        placed.joined = true;
        if (mine->tpcs.count() != count)
            placed.notes.push_back(fmt::format("{} holds {} TPCs here ({}), not the {} Slurm gave it: it was resized live",
                                               job_display(job), mine->tpcs.count(), mine->tpcs.to_list(), count));
    } else {
        TpcMask taken = tpcs_of_other_jobs(placed.state, job);
        for (const ProcessState& process : placed.state.processes)
            if (process.job.empty() && process.partitioned) taken |= process.mask;
        const TpcMask free = real & ~taken;
        if (count > free.count())
            throw UserError(fmt::format("{} asks {} TPCs on GPU {} ({}) but only {} are free: {}", job_display(job), count,
                                        gpu.index, gpu_display_name(gpu), free.count(), holders_text(placed.state, job)));
        placed.tpcs = place_tpcs_packed(gpu, count, free);
        jobs.push_back(JobReservation{job, step.uid, placed.tpcs, count, realtime_ns(), {step.holder}});
    }
    lock.write(jobs);
    placed.state.jobs = jobs;
    return placed;
}

std::vector<std::string> release_job_step(const Registry& registry, const JobHolder& holder, int wait_ms) {
    std::vector<std::string> lines;
    // The step's tasks were just signalled (scancel, a task killed): give them a moment to be gone, so
    // their TPCs go back now rather than at the next placement's sweep.
    std::vector<std::string> steps;
    for (const std::string& uuid : job_reservation_gpus(registry.directory()))
        for (const JobReservation& reservation : read_job_reservations(registry.directory(), uuid, registry.numberings()))
            for (const JobHolder& h : reservation.holders)
                if (h.pid == holder.pid && h.start_time == holder.start_time) steps.push_back(h.step);
    const auto step_alive = [&](const std::vector<RegistryEntry>& listed) {
        return std::any_of(listed.begin(), listed.end(), [&](const RegistryEntry& entry) {
            return entry.record && entry.liveness == Liveness::alive &&
                   std::find(steps.begin(), steps.end(), entry.record->job) != steps.end();
        });
    };
    std::vector<RegistryEntry> entries = registry.list();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    while (!steps.empty() && step_alive(entries) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        entries = registry.list();
    }
    for (const std::string& uuid : job_reservation_gpus(registry.directory())) {
        const JobReservationsLock lock(registry.directory(), uuid, registry.numberings());
        std::vector<JobReservation> jobs = lock.read();
        const std::vector<JobReservation> before = jobs;
        for (JobReservation& reservation : jobs)
            std::erase_if(reservation.holders, [&](const JobHolder& h) { return h.pid == holder.pid && h.start_time == holder.start_time; });
        for (const std::string& line : sweep_stale_jobs(jobs, entries)) lines.push_back(fmt::format("{} on {}", line, uuid));  // "... released (...) on GPU-..."
        if (jobs != before) lock.write(jobs);
    }
    return lines;
}

}  // namespace gpupart
