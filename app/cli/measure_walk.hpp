#pragma once
// gpupart measure's walk: a process given a series of TPC masks, its progress rate counted at each, and
// the TPCs it had put back at the end, whatever ends the walk (done, Ctrl-C, SIGTERM, SIGHUP, an error).
//
// Journaled as one change (journal.hpp, JournalWalk): the first mask that differs from the process's own
// goes through the controller (its findings, its journal entry, which names this gpupart as the walk's
// writer); the later masks are compare-and-set writes to the slot without entries of their own; the end
// is an undo of that entry (Controller::plan_undo_of), so a walk that ended leaves nothing to undo and
// history shows both. A gpupart killed mid-walk (SIGKILL) leaves the entry undoable: `gpupart undo`
// puts the TPCs back. Someone else's change to the process stops the walk, and theirs stands.
#include <chrono>
#include <csignal>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "controller/controller.hpp"

namespace gpupart::cli {

struct WalkStep {
    TpcMask mask;
    int tpcs = 0;
    std::uint64_t submissions = 0;  // kernel launches + graph replays counted over `seconds`
    double seconds = 0;
    std::optional<double> cpu_percent;  // the process's CPU over the dwell (one core = 100)
    double rate() const { return seconds > 0 ? static_cast<double>(submissions) / seconds : 0; }
};

struct WalkResult {
    std::vector<WalkStep> steps;  // those measured whole, in walk order
    std::optional<JournalId> started;  // the walk's journal entry (none when no mask was changed)
    std::optional<Applied> ended;      // the undo that put the TPCs back
    std::string stopped;       // why the walk stopped early (one line); empty when it walked every mask
    int signal = 0;            // the signal that stopped it, 0 if none
    std::string restore_problem;  // why the TPCs were not put back (one line); empty when they were
    std::vector<Finding> findings;  // of the first step's plan, as `gpupart set` prints them
};

struct WalkOptions {
    std::chrono::milliseconds dwell{2000};
    // How long to wait for the shim to apply a mask (at the process's next launch) before calling the
    // process idle.
    std::chrono::milliseconds apply_timeout{5000};
    std::function<void(const WalkStep&)> on_step;  // progress, after each measured step
};

// Walks process `pid` (in `controller`'s state) through `masks`, in order. Never throws once the first
// mask is applied: every way out goes through putting the TPCs back, and the result says how it went.
// Throws UserError before that (process not there, first plan refused).
WalkResult walk_masks(Controller& controller, int pid, const std::vector<TpcMask>& masks, const WalkOptions& options);

// SIGINT, SIGTERM and SIGHUP set a flag instead of ending gpupart while one of these exists, so a walk
// can stop at its next check and put the TPCs back; the previous handlers come back with its end.
class StopSignals {
public:
    StopSignals();
    ~StopSignals();
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;
    static int received();  // the signal that came, 0 if none
    static const char* name(int signal);

private:
    struct sigaction old_int_ {}, old_term_ {}, old_hup_ {};
};

}  // namespace gpupart::cli
