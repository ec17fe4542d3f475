// Applying a plan (Controller::apply): journal the intent, write the slots and the rules, finish the
// journal entry; and rolling back what was written when a step fails, so a plan applies whole or not at
// all. Planning is controller.cpp's.
#include "controller/controller.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "controller/audit_log.hpp"
#include "controller/job_rules.hpp"
#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "model/mask_resolve.hpp"
#include "model/overloaded.hpp"
#include "model/pid.hpp"
#include "model/placement.hpp"
#include "model/user_error.hpp"

namespace gpupart {

namespace {

// Test hook (README, "Test hooks"): GPUPART_TEST_KILL_AT=before-apply|after-apply makes this process
// SIGKILL itself right after journaling a change's intent, or right after writing its slots and rules
// but before finishing its journal entry, so the hostile tests can prove a killed gpupart leaves the
// journal truthful. Nothing else reads it; unset (always, outside tests) it does nothing.
void kill_here_for_test(std::string_view point) {
    if (const char* at = std::getenv("GPUPART_TEST_KILL_AT"); at != nullptr && point == at) ::raise(SIGKILL);
}

// How long a change waits for the processes' CUDA graph re-masks (Registry::wait_for_graph_remasks).
constexpr std::chrono::milliseconds kGraphRemaskWait{1000};

}  // namespace

bool Controller::roll_back(const Plan& plan, const std::vector<const PlannedChange*>& done, const JournalEntry& entry,
                           bool rules_written) {
    // Put back what this plan already changed, so a plan applies whole or not at all.
    bool restored = true;
    const TpcMask real = real_tpcs(state_.gpu);
    for (std::size_t i = 0; i < done.size(); ++i) {
        const PlannedChange& change = *done[i];
        try {
            registry_.set_mask(change.pid, state_.gpu_uuid, change.before_partitioned, change.before, real,
                               {change.start_time, entry.changes[i].generation_after});
        } catch (const UserError&) {
            restored = false;  // someone changed it again meanwhile: theirs stands
        }
    }
    if (rules_written) {
        try {
            if (same_rules(read_armed_rules(registry_.directory()), plan.rules->after))
                write_armed_rules(registry_.directory(), plan.rules->before);
            else
                restored = false;
        } catch (const UserError&) {
            restored = false;
        }
    }
    return restored;
}

Applied Controller::apply(const Plan& plan) {
    if (plan.refused()) {
        for (const Finding& finding : plan.findings)
            if (finding.severity == Severity::error) throw UserError(finding.message + "; nothing changed");
    }
    // Never an empty journal entry: the next undo would undo nothing. (An undo of such an entry, written
    // by an older version, still goes through so it does not block every undo behind it.)
    if (plan.changes_nothing() && !plan.undoes) throw UserError(fmt::format("{}: this changes nothing; nothing changed", plan.action));
    const TpcMask real = real_tpcs(state_.gpu);
    JournalEntry entry;
    entry.action = plan.action;
    entry.undoes = plan.undoes;
    entry.walk = plan.walk;
    // The intent goes to the journal first, under its lock (held until this function returns): a
    // journal that cannot be written refuses the change before any slot is touched.
    JournalIntent intent{entry, {}, registry_.directory()};
    const std::optional<TpcNumbering> numbering = TpcNumbering::try_of(state_.gpu);
    const auto bits_of = [&](bool partitioned, const TpcMask& numbers) -> std::optional<TpcMask> {
        if (!partitioned || !numbering) return std::nullopt;
        return numbering->to_bits(numbers);
    };
    for (const PlannedChange& change : plan.changes) {
        intent.entry.changes.push_back(JournalChange{change.pid, state_.gpu_uuid, change.start_time, change.command, change.before_partitioned,
                                                     change.before, change.after_partitioned, change.after, 0, true,
                                                     bits_of(change.before_partitioned, change.before),
                                                     bits_of(change.after_partitioned, change.after)});
        intent.before_generations.push_back(change.before_generation);
    }
    intent.entry.rules = plan.rules;
    std::optional<JournalTransaction> transaction;
    try {
        transaction.emplace(journal_.begin(std::move(intent)));
    } catch (const UserError& error) {
        const std::string message = error.what();
        throw UserError(message.find("nothing") == std::string::npos ? message + "; nothing changed" : message);
    }
    kill_here_for_test("before-apply");
    std::vector<const PlannedChange*> done;
    bool rules_written = false;
    try {
        for (const PlannedChange& change : plan.changes) {
            const SlotRecord after = registry_.set_mask(change.pid, state_.gpu_uuid, change.after_partitioned, change.after, real,
                                                        {change.start_time, change.before_generation});
            done.push_back(&change);
            // The journal is JSON: a command line with bytes that are not UTF-8 would fail its append after the
            // mask is set, leaving the change unjournaled.
            entry.changes.push_back(JournalChange{change.pid, state_.gpu_uuid, change.start_time, valid_utf8(change.command), change.before_partitioned,
                                                  change.before, change.after_partitioned, change.after,
                                                  after.control ? after.control->generation : 0, true,
                                                  bits_of(change.before_partitioned, change.before),
                                                  bits_of(change.after_partitioned, change.after)});
        }
        if (plan.rules) {
            // A compare-and-set like the masks': rules armed since the plan was made are not overwritten.
            if (const ArmedRules now = read_armed_rules(registry_.directory()); !same_rules(now, plan.rules->before))
                throw UserError(fmt::format("your rules for processes that start later were changed since this was planned (now {}); "
                                            "nothing changed", rules_summary(now)));
            write_armed_rules(registry_.directory(), plan.rules->after);
            rules_written = true;
            entry.rules = plan.rules;
        }
    } catch (const UserError& error) {
        // Only a change that is wholly back is recorded as aborted; otherwise the intent stays and the
        // next reader records what it finds in the slots.
        if (roll_back(plan, done, entry, rules_written)) transaction->abort(error.what());
        transaction.reset();
        refresh();
        throw UserError(std::string(error.what()));
    }
    kill_here_for_test("after-apply");
    JournalEntry journaled;
    try {
        journaled = transaction->commit(entry);
    } catch (const UserError& error) {
        // The entry cannot be written (disk full, file size limit): undo the slots rather than leave a
        // change the journal does not know.
        const bool restored = roll_back(plan, done, entry, rules_written);
        if (restored) transaction->abort(error.what());
        transaction.reset();
        refresh();
        throw UserError(fmt::format("{}; {}", error.what(),
                                    restored ? "the change was put back: nothing changed"
                                             : "a process was changed again meanwhile, so not all was put back: "
                                               "`gpupart history` shows what is in effect"));
    }
    Applied applied{plan, std::move(journaled), transaction->notes()};
    // Changes to other users' processes go to the system log too (audit_log.hpp), still under the
    // journal's lock so the records come in the journal's order. The change is made: a record that
    // cannot be delivered is a note, not a failure.
    for (std::string& problem : audit_changes(current_actor(), applied.entry.action, applied.entry.id, done))
        applied.notes.push_back(std::move(problem));
    transaction.reset();
    // The change is in effect for every launch from here on; a CUDA graph exec takes it at its next replay
    // unless the shim's re-mask thread has rebuilt it already. Waiting for that thread (about a millisecond
    // for a 200-kernel exec) keeps the cost out of the application's next replay.
    std::vector<std::pair<int, std::uint64_t>> written;
    for (const JournalChange& change : applied.entry.changes) written.emplace_back(change.pid, change.generation_after);
    for (const int pid : registry_.wait_for_graph_remasks(written, kGraphRemaskWait))
        applied.notes.push_back(fmt::format("process {}: not all of its CUDA graphs were re-masked within {} ms; they take the "
                                            "new mask at their next launch", pid, kGraphRemaskWait.count()));
    refresh();
    // A job's reservation follows what was done to its processes (job_rules.hpp).
    for (std::string& note : follow_job_changes(registry_.directory(), state_, plan.changes)) applied.notes.push_back(std::move(note));
    return applied;
}

}  // namespace gpupart
