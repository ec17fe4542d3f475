// Finishing a change whose gpupart was killed between its journal intent and its entry (journal.hpp):
// what of it is in effect is read from the slots and the armed rules, never guessed.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "controller/journal.hpp"
#include "model/user_error.hpp"
#include "registry/registry.hpp"

namespace gpupart {
namespace {

// What one planned change became. The registry's compare-and-set moves a slot from the expected
// generation G to exactly G+1 (SlotFile::write_control), so G+1 with the planned mask is this change;
// G is a change never made; anything else was written by someone else since (or this change's own
// roll-back), and is not this change's to undo.
enum class ChangeOutcome { in_effect, not_made, put_back, changed_since, gone };

ChangeOutcome change_outcome(const JournalChange& change, std::uint64_t before_generation,
                             const std::vector<RegistryEntry>& slots, std::uint64_t& generation_now) {
    for (const RegistryEntry& slot : slots) {
        if (!slot.record || slot.record->pid != change.pid || slot.record->start_time != change.start_time) continue;
        if (slot.liveness != Liveness::alive) return ChangeOutcome::gone;
        if (!slot.record->control) return ChangeOutcome::changed_since;  // a write in progress, not ours (we hold the lock)
        const SlotControl& control = *slot.record->control;
        generation_now = control.generation;
        const GpuControl* entry = control.gpu(change.gpu);  // none: unconfined on that GPU
        const bool has_mask = entry != nullptr && entry->has_mask;
        // The registry is read without any GPU's map: the slot's descriptor bits, compared with the intent's.
        const bool as_planned = has_mask == change.after_partitioned && (!has_mask || entry->allowed == change.after_bits);
        const bool as_before = has_mask == change.before_partitioned && (!has_mask || entry->allowed == change.before_bits);
        if (control.generation == before_generation) return ChangeOutcome::not_made;
        if (control.generation == before_generation + 1 && as_planned) return ChangeOutcome::in_effect;
        return as_before ? ChangeOutcome::put_back : ChangeOutcome::changed_since;
    }
    return ChangeOutcome::gone;
}

}  // namespace

std::optional<JournalEntry> recover_intent(const JournalIntent& intent, std::string& note) {
    JournalEntry entry = intent.entry;
    entry.changes.clear();
    entry.rules.reset();
    std::vector<std::string> found;
    std::vector<RegistryEntry> slots;
    try {
        slots = Registry(intent.registry).list();
    } catch (const UserError& error) {
        found.push_back(fmt::format("registry {} unreadable ({})", one_line(intent.registry), error.what()));
    }
    for (std::size_t i = 0; i < intent.entry.changes.size(); ++i) {
        JournalChange change = intent.entry.changes[i];
        std::uint64_t generation_now = 0;
        switch (change_outcome(change, intent.before_generations[i], slots, generation_now)) {
            case ChangeOutcome::in_effect:
                change.generation_after = generation_now;
                entry.changes.push_back(change);
                found.push_back(fmt::format("process {} has it (generation {})", change.pid, generation_now));
                break;
            case ChangeOutcome::not_made: found.push_back(fmt::format("process {} was not changed", change.pid)); break;
            case ChangeOutcome::put_back: found.push_back(fmt::format("process {} was put back", change.pid)); break;
            case ChangeOutcome::changed_since:
                found.push_back(fmt::format("process {} was changed by someone else since (generation {}): left out",
                                            change.pid, generation_now));
                break;
            case ChangeOutcome::gone: found.push_back(fmt::format("process {} has exited: left out", change.pid)); break;
        }
    }
    if (intent.entry.rules) {
        try {
            if (same_rules(read_armed_rules(intent.registry), intent.entry.rules->after)) {
                entry.rules = intent.entry.rules;
                found.push_back("the rules for later processes are armed");
            } else {
                found.push_back("the rules for later processes were not changed");
            }
        } catch (const UserError& error) {
            found.push_back(fmt::format("the rules for later processes are unreadable ({}): left out", error.what()));
        }
    }
    const bool any = !entry.changes.empty() || entry.rules.has_value();
    note = fmt::format("{}; {}", fmt::join(found, ", "),
                       any ? "kept in the history as found" : "nothing of it is in effect, so it is not in the history");
    if (!any) return std::nullopt;
    entry.recovered = one_line(note);
    return entry;
}

}  // namespace gpupart
