#pragma once
// The only way partitions change: every front end (CLI, GUI, terminal view) plans a change here, shows
// its findings, and applies it here. A plan with an error finding is refused and nothing changes; an
// applied plan is journaled so it can be undone.
#include <optional>
#include <string>
#include <vector>

#include "controller/finding.hpp"
#include "controller/journal.hpp"
#include "controller/rules.hpp"
#include "controller/rules_table.hpp"
#include "controller/system_state.hpp"
#include "model/mask_expression.hpp"

namespace gpupart {

enum class Placement { packed, spread };

struct SetRequest {
    int pid = 0;
    std::string tpcs;  // mask expression; counts are placed on TPCs no other partitioned process holds
    Placement placement = Placement::packed;
    std::uint64_t start_time = 0;  // the process chosen (ProcessRef); 0: whichever has `pid` now
};

// An exact mask for one process, as the GUI and the terminal view compute it from a drag or a key.
struct MaskRequest {
    int pid = 0;
    TpcMask tpcs;
    std::uint64_t start_time = 0;  // the process chosen (ProcessRef); 0: whichever has `pid` now
};

struct Plan {
    std::string action;  // what the journal will say: "set 1234 gpc1"
    std::vector<PlannedChange> changes;
    std::vector<Finding> findings;
    std::optional<JournalId> undoes;  // the journal entry this plan reverts (plan_undo)
    std::optional<RulesChange> rules;  // the caller's armed profile rules it replaces (profile apply, disarm, undo)
    // Requested changes that would leave a process as it is: never applied or journaled (each has a
    // no-change note), kept so a caller can still say what was asked (profile drift).
    std::vector<PlannedChange> unchanged;
    std::optional<JournalWalk> walk;  // journaled with the change: its gpupart goes on changing it (journal.hpp)
    bool refused() const { return has_error(findings); }
    bool changes_nothing() const { return changes.empty() && !rules; }
};

struct Applied {
    Plan plan;
    JournalEntry entry;
    std::vector<std::string> notes;  // what reading the journal found on the way (Journal::load), one line each
};

class Controller {
public:
    Controller(Registry registry, Gpu gpu, Journal journal);

    const SystemState& state() const { return state_; }
    void refresh();  // re-reads the registry and MPS

    Plan plan_set(const std::vector<SetRequest>& requests, const std::string& action) const;
    Plan plan_masks(const std::vector<MaskRequest>& requests, const std::string& action) const;
    // plan_masks with `refusals` (found by the caller's own planning) in front; with no request left, a
    // plan that carries only them.
    Plan plan_masks_refusing(const std::vector<MaskRequest>& requests, std::vector<Finding> refusals,
                             const std::string& action) const;
    Plan plan_undo() const;  // reverts the newest change in the journal that is not undone yet
    // Reverts journal entry `id` (not undone yet, not an undo), newer entries or not: each of its processes
    // must still be as it left them, which no newer change of theirs can be. How `gpupart measure` ends
    // its walk (journal.hpp, JournalWalk) when the user journaled other changes meanwhile.
    Plan plan_undo_of(JournalId id) const;
    // Arms `after` as the caller's profile rules for processes that start later (nullopt disarms them).
    Plan plan_rules(ArmedRules after, const std::string& action) const;
    // Applies a plan that has no error finding; refuses (UserError) otherwise. A process that changed
    // since the plan was made is not overwritten: the whole plan is rolled back and refused. Applying
    // and journaling are one step (journal.hpp): the intent is journaled first, and a journal entry
    // that cannot be written rolls the slots back.
    Applied apply(const Plan& plan);

    // The TPCs no partitioned process other than `pid` holds and no scheduler job other than its own has
    // reserved: where its requests by size land.
    TpcMask free_for(int pid) const;
    const std::string& registry_directory() const { return registry_.directory(); }
    // The same registry and journal for another GPU (a front end switching GPUs).
    Controller with_gpu(const Gpu& gpu) const { return Controller(registry_, gpu, journal_); }

private:
    Plan plan_undo_entry(const JournalContents& journal, const JournalEntry& last) const;
    // Adds a refusal when pid is not live, or names another process than the one with `start_time` (0: any).
    std::optional<PlannedChange> change_for(int pid, std::uint64_t start_time, Plan& plan) const;
    // Puts back the `done` changes of `plan` (and its rules when written); false when any was changed
    // again by someone else meanwhile (theirs stands).
    bool roll_back(const Plan& plan, const std::vector<const PlannedChange*>& done, const JournalEntry& entry,
                   bool rules_written);

    Registry registry_;
    Journal journal_;
    SystemState state_;
};

// Spreads `count` TPCs over GPCs one at a time (Bakita & Anderson's (RTAS 2023) SE-distributed), lowest bits first.
TpcMask place_tpcs_spread(const Gpu& gpu, int count, const TpcMask& available);

// Where a request by size ("8 tpcs", "25%", "2 gpcs") lands among `available` TPCs; nullopt for an
// expression that names its TPCs (bits, GPCs, hex, all). Throws UserError when too few are available.
std::optional<TpcMask> place_request(const Gpu& gpu, const MaskExpression& expression, const TpcMask& available,
                                     Placement placement);

}  // namespace gpupart
