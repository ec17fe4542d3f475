#include "measure_walk.hpp"

#include <unistd.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "curve_paths.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "platform/process_usage.hpp"

namespace gpupart::cli {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

using Clock = std::chrono::steady_clock;

// Sleeps until `until` in short slices, so that a stop signal ends a dwell within 50 ms; false when one came.
bool sleep_until_or_stopped(Clock::time_point until) {
    while (Clock::now() < until) {
        if (StopSignals::received() != 0) return false;
        std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
    }
    return StopSignals::received() == 0;
}

// What the walk reads from the slot at each point: the counters and what the shim applies.
struct Reading {
    std::uint64_t submissions = 0;  // the same count as ProcessState::submissions()
    std::uint64_t generation = 0;
    std::uint64_t applied_generation = 0;
};

Reading read_slot(const Registry& registry, int pid, const std::string& uuid) {
    const SlotRecord record = registry.find_live(pid);  // RegistryError when it exited
    Reading reading;
    reading.submissions = record.counters.launches + record.counters.graph_launches;
    reading.generation = record.control ? record.control->generation : 0;
    if (record.status)
        if (const GpuStatus* here = record.status->gpu(uuid)) reading.applied_generation = here->applied_generation;
    return reading;
}

std::string first_error(const std::vector<Finding>& findings) {
    for (const Finding& finding : findings)
        if (finding.severity == Severity::error) return finding.message;
    return "refused";
}

}  // namespace

StopSignals::StopSignals() {
    g_stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: a blocking call returns, and the walk checks the flag
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
    ::sigaction(SIGHUP, &action, &old_hup_);
}

StopSignals::~StopSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    ::sigaction(SIGHUP, &old_hup_, nullptr);
}

int StopSignals::received() { return g_stop_signal; }

const char* StopSignals::name(int signal) {
    switch (signal) {
        case SIGINT: return "SIGINT (Ctrl-C)";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        default: return "a signal";
    }
}

WalkResult walk_masks(Controller& controller, int pid, const std::vector<TpcMask>& masks, const WalkOptions& options) {
    const ProcessState* process = &measured_process(controller.state(), pid);
    const bool original_partitioned = process->partitioned;
    const TpcMask original = process->mask;
    const std::uint64_t start_time = process->start_time;
    const std::string action = fmt::format("measure {} ({} TPC counts from {} to {}; ends with an undo of this entry)", pid,
                                           masks.size(), masks.front().count(), masks.back().count());
    const Registry registry(controller.registry_directory(), controller.state().gpu);
    const std::string uuid = controller.state().gpu_uuid;
    const TpcMask real = real_tpcs(controller.state().gpu);
    ProcessUsageSampler cpu;
    WalkResult result;
    std::uint64_t generation = process->generation;  // what the next write compares against
    for (const TpcMask& mask : masks) {
        if (const int signal = StopSignals::received()) {
            result.signal = signal;
            result.stopped = fmt::format("stopped by {}", StopSignals::name(signal));
            break;
        }
        try {
            const bool unchanged = !result.started && original_partitioned && mask == original;
            if (!result.started && !unchanged) {
                // The first change is the journaled one, with its findings; a refusal changes nothing and ends here.
                Plan plan = controller.plan_masks({{pid, mask, start_time}}, action);
                plan.walk = JournalWalk{static_cast<int>(::getpid()), masks.size()};
                if (plan.refused()) throw UserError(first_error(plan.findings) + "; nothing changed");
                const Applied applied = controller.apply(plan);
                result.started = applied.entry.id;
                result.findings = plan.findings;
                generation = applied.entry.changes.at(0).generation_after;
            } else if (!unchanged) {
                generation = registry.set_mask(pid, uuid, true, mask, real, {start_time, generation}).control.value().generation;
            }
            // The shim applies a mask at the process's next launch: until then its launches are the old mask's.
            const auto apply_deadline = Clock::now() + options.apply_timeout;
            Reading before = read_slot(registry, pid, uuid);
            while (!unchanged && before.applied_generation < generation) {
                if (Clock::now() > apply_deadline) {
                    result.stopped = fmt::format("process {} made no kernel launch in {:.1f} s after its TPCs changed: it is idle, "
                                                 "so there is no rate to measure", pid,
                                                 std::chrono::duration<double>(options.apply_timeout).count());
                    break;
                }
                if (!sleep_until_or_stopped(Clock::now() + std::chrono::milliseconds(10))) break;
                before = read_slot(registry, pid, uuid);
            }
            if (!result.stopped.empty()) break;
            if (StopSignals::received() != 0) continue;  // the check at the top says why
            const auto started = Clock::now();
            cpu.sample(pid, start_time, started);
            if (!sleep_until_or_stopped(started + options.dwell)) continue;
            const Reading after = read_slot(registry, pid, uuid);
            const auto ended = Clock::now();
            if (after.generation != generation) {
                result.stopped = fmt::format("process {} was given other TPCs by someone else during the measurement: the walk "
                                             "stopped there and their change stands", pid);
                break;
            }
            WalkStep step{mask, mask.count(), after.submissions - before.submissions,
                          std::chrono::duration<double>(ended - started).count(), cpu.sample(pid, start_time, ended).cpu_percent};
            result.steps.push_back(step);
            if (options.on_step) options.on_step(step);
        } catch (const UserError& error) {
            if (!result.started) throw;  // nothing changed yet: an ordinary refusal
            result.stopped = one_line(error.what());
            break;
        }
    }
    if (const int signal = StopSignals::received(); signal != 0 && result.signal == 0 && result.steps.size() < masks.size()) {
        result.signal = signal;  // during the last dwell
        result.stopped = fmt::format("stopped by {}", StopSignals::name(signal));
    }
    if (result.started) {
        // Always, however the walk ended: the TPCs from before it go back, journaled as the undo of its entry.
        try {
            controller.refresh();
            Plan end = controller.plan_undo_of(*result.started);
            end.action = fmt::format("end of measure #{}: process {}'s TPCs put back", *result.started, pid);
            if (end.refused())
                result.restore_problem = first_error(end.findings);
            else
                result.ended = controller.apply(end);
        } catch (const UserError& error) {
            result.restore_problem = one_line(error.what());
        }
    }
    return result;
}

}  // namespace gpupart::cli
