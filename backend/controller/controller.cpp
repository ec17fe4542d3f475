// The controller: its view of one GPU's processes and its plans (set, masks, undo, rules), each checked
// before anything is written. Applying a plan is controller_apply.cpp's.
#include "controller/controller.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>

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
TpcMask place_tpcs_spread(const Gpu& gpu, int count, const TpcMask& available) {
    const TpcMask usable = available & real_tpcs(gpu);
    if (count <= 0) throw UserError("a TPC count must be at least 1");
    if (count > usable.count())
        throw UserError(fmt::format("{} TPCs requested but only {} are available on {}", count, usable.count(), gpu_display_name(gpu)));
    std::vector<std::vector<int>> pools;
    for (const Gpc& gpc : gpu.gpcs) pools.push_back((gpc_tpcs(gpu, gpc.index) & usable).bits());
    pools.push_back((undetermined_gpc_tpcs(gpu) & usable).bits());
    TpcMask placed;
    for (std::size_t round = 0; placed.count() < count; ++round)
        for (const auto& pool : pools)
            if (round < pool.size() && placed.count() < count) placed.set(pool[round]);
    return placed;
}

Controller::Controller(Registry registry, Gpu gpu, Journal journal)
    : registry_(std::move(registry)), journal_(std::move(journal)) {
    registry_.learn_numbering(gpu);  // its slots' descriptor bits read and write as this GPU's TPC numbers
    journal_.learn_numbering(gpu);   // and so do history entries written before TPC numbers
    state_ = gather_state(registry_, gpu);
}

void Controller::refresh() { state_ = gather_state(registry_, state_.gpu); }

std::optional<TpcMask> place_request(const Gpu& gpu, const MaskExpression& expression, const TpcMask& available,
                                     Placement placement) {
    const TpcMask free = available & real_tpcs(gpu);
    const int total = real_tpcs(gpu).count();
    const auto place_count = [&](int count) {
        if (count > free.count())
            throw UserError(fmt::format("{} TPCs requested but only {} are free (not given to another process); ask for "
                                        "fewer, or name TPCs explicitly to share them", count, free.count()));
        return placement == Placement::spread ? place_tpcs_spread(gpu, count, free) : place_tpcs_packed(gpu, count, free);
    };
    return std::visit(Overloaded{[&](const TpcCount& c) -> std::optional<TpcMask> { return place_count(c.count); },
                                 [&](const SharePercent& s) -> std::optional<TpcMask> {
                                     return place_count(std::max(1, static_cast<int>(std::lround(s.percent / 100.0 * total))));
                                 },
                                 [&](const GpcCount& c) -> std::optional<TpcMask> { return place_gpcs(gpu, c.count, free); },
                                 [](const auto&) -> std::optional<TpcMask> { return std::nullopt; }},
                      expression.value);
}

TpcMask Controller::free_for(int pid) const {
    TpcMask taken;
    std::string job;  // the process's scheduler job: its own reservation is not taken from it
    for (const auto& process : state_.processes) {
        if (process.pid != pid && process.partitioned) taken |= process.mask;
        if (process.pid == pid) job = job_of_step(process.job);
    }
    for (const JobReservation& reservation : state_.jobs)
        if (reservation.job != job) taken |= reservation.tpcs;
    return real_tpcs(state_.gpu) & ~taken;
}

std::optional<PlannedChange> Controller::change_for(int pid, std::uint64_t start_time, Plan& plan) const {
    // Every front end's target goes through here: a pid no process can have is refused by the one rule.
    if (const auto problem = pid_problem(pid)) {
        plan.findings.push_back(refusal("no-such-process", "model/pid.hpp: a process id is 1 to 4194304", *problem));
        return std::nullopt;
    }
    const ProcessState* process = find_process(state_, pid);
    for (const ProcessState& other : state_.elsewhere)  // on other GPUs only: it may get a mask here too
        if (process == nullptr && other.pid == pid) process = &other;
    if (process == nullptr) {
        // Let the registry say precisely why (not running, not partitioned, pid reused, forged slot).
        std::string why;
        try {
            registry_.find_live(pid);
            why = fmt::format("process {} is not a live partitioned process", pid);
        } catch (const UserError& error) {
            why = error.what();
        }
        plan.findings.push_back(refusal("no-such-process", "registry: a process is its pid and start time", why));
        return std::nullopt;
    }
    if (start_time != 0 && process->start_time != start_time) {
        plan.findings.push_back(refusal("process-replaced", "registry: a process is its pid and start time",
                                        fmt::format("process {} is not the one you chose: that one has exited and pid {} now names "
                                                    "another process ({}); nothing was planned for it", pid, pid,
                                                    one_line(process->command, 40))));
        return std::nullopt;
    }
    PlannedChange change;
    change.pid = process->pid;
    change.start_time = process->start_time;
    change.uid = process->uid;
    change.command = process->command;
    change.before_partitioned = process->partitioned;
    change.before = process->mask;
    change.before_generation = process->generation;
    return change;
}

namespace {

// A change that leaves a process as it is does nothing but add an empty journal entry (which the next
// undo would then "undo"): it is dropped from the plan, and a plan left with nothing to do is refused.
void drop_unchanged(Plan& plan) {
    std::vector<PlannedChange> kept;
    for (PlannedChange& change : plan.changes) {
        if (change.before_partitioned == change.after_partitioned && change.before == change.after) {
            plan.findings.push_back({Severity::info, "controller",
                                     fmt::format("process {} already has TPCs {}: nothing to change for it", change.pid,
                                                 change.after_partitioned ? change.after.to_list() : "all"),
                                     "no-change"});
            plan.unchanged.push_back(std::move(change));
            continue;
        }
        kept.push_back(std::move(change));
    }
    plan.changes = std::move(kept);
    if (plan.changes.empty() && !plan.rules && !has_error(plan.findings)) {
        bool said = false;  // each process's "already has" becomes the refusal
        for (Finding& finding : plan.findings)
            if (finding.id == "no-change") {
                finding.severity = Severity::error;
                said = true;
            }
        if (!said) plan.findings.push_back(refusal("no-change", "controller", fmt::format("{}: this changes nothing", plan.action)));
    }
}

}  // namespace

Plan Controller::plan_set(const std::vector<SetRequest>& requests, const std::string& action) const {
    Plan plan;
    plan.action = action;
    for (const SetRequest& request : requests) {
        auto change = change_for(request.pid, request.start_time, plan);
        if (!change) continue;
        try {
            const MaskExpression expression = parse_mask_expression(request.tpcs);
            const auto placed = place_request(state_.gpu, expression, free_for(change->pid), request.placement);
            change->after = placed ? *placed : resolve_mask(expression, state_.gpu).mask;
        } catch (const UserError& error) {
            plan.findings.push_back(refusal("bad-mask", "TPC numbers and descriptor holes (measured on the H200)", error.what()));
            continue;
        }
        plan.changes.push_back(std::move(*change));
    }
    drop_unchanged(plan);
    auto findings = check_plan(state_, plan.changes);
    plan.findings.insert(plan.findings.end(), findings.begin(), findings.end());
    return plan;
}

Plan Controller::plan_masks_refusing(const std::vector<MaskRequest>& requests, std::vector<Finding> refusals,
                                     const std::string& action) const {
    Plan plan;
    plan.action = action;
    if (!requests.empty()) plan = plan_masks(requests, action);
    // A refusal of the caller's makes plan_masks' "changes nothing" refusal redundant: its reason stands.
    if (!refusals.empty())
        for (Finding& finding : plan.findings)
            if (finding.id == "no-change") finding.severity = Severity::info;
    plan.findings.insert(plan.findings.begin(), refusals.begin(), refusals.end());
    if (requests.empty()) drop_unchanged(plan);  // plan_masks did it otherwise
    return plan;
}

Plan Controller::plan_masks(const std::vector<MaskRequest>& requests, const std::string& action) const {
    Plan plan;
    plan.action = action;
    for (const MaskRequest& request : requests) {
        auto change = change_for(request.pid, request.start_time, plan);
        if (!change) continue;
        change->after = request.tpcs;  // exact: an empty or hole-only mask is refused by the no-real-tpc rule
        plan.changes.push_back(std::move(*change));
    }
    drop_unchanged(plan);
    auto findings = check_plan(state_, plan.changes);
    plan.findings.insert(plan.findings.end(), findings.begin(), findings.end());
    return plan;
}

Plan Controller::plan_undo() const {
    const JournalContents journal = journal_.load();
    const auto last = last_undoable(journal.entries);
    if (!last) throw UserError(fmt::format("nothing to undo (history {})", journal_.path()));
    return plan_undo_entry(journal, *last);
}

Plan Controller::plan_undo_of(JournalId id) const {
    const JournalContents journal = journal_.load();
    const auto found = std::find_if(journal.entries.begin(), journal.entries.end(), [&](const JournalEntry& e) { return e.id == id; });
    if (found == journal.entries.end()) throw UserError(fmt::format("#{} is not in the history {}", id, journal_.path()));
    if (found->undoes) throw UserError(fmt::format("#{} is an undo itself: it cannot be undone by id", id));
    for (const JournalEntry& entry : journal.entries)
        if (entry.undoes == id) throw UserError(fmt::format("#{} was undone already, by #{}", id, entry.id));
    return plan_undo_entry(journal, *found);
}

Plan Controller::plan_undo_entry(const JournalContents& journal, const JournalEntry& undone) const {
    const JournalEntry* last = &undone;
    // The generation each process got from the newest journaled change (an undo included): anything
    // else means someone changed it outside this journal since.
    std::map<std::pair<int, std::uint64_t>, std::uint64_t> journaled_generation;
    for (const JournalEntry& entry : journal.entries)
        for (const JournalChange& change : entry.changes)
            journaled_generation[{change.pid, change.start_time}] = change.generation_after;
    Plan plan;
    for (const std::string& note : journal.notes) plan.findings.push_back({Severity::warning, "journal", note, "journal-note"});
    plan.action = fmt::format("undo #{} ({})", last->id, last->action);
    plan.undoes = last->id;
    for (const JournalChange& done : last->changes) {
        if (const auto problem = pid_problem(done.pid)) {  // a journal is a file: it may hold anything
            plan.findings.push_back(refusal("undo-process-gone", "journal", fmt::format("#{} names {}: it cannot be put back", last->id, *problem)));
            continue;
        }
        if (!done.gpu.empty() && done.gpu != state_.gpu_uuid) {
            plan.findings.push_back(refusal("undo-other-gpu", "journal",
                                            fmt::format("#{} changed process {} on GPU {}, not on this GPU ({}): undo it with --gpu {}",
                                                        last->id, done.pid, one_line(done.gpu, 48), state_.gpu_uuid,
                                                        one_line(done.gpu, 48))));
            continue;
        }
        if (!done.numbered) {
            plan.findings.push_back(refusal("undo-unnumbered", "journal",
                                            fmt::format("#{} recorded process {}'s TPCs as launch-descriptor bits of a GPU whose map "
                                                        "is not known here: it cannot be put back", last->id, done.pid)));
            continue;
        }
        const ProcessState* process = find_process(state_, done.pid);
        if (process == nullptr || process->start_time != done.start_time) {
            plan.findings.push_back(refusal("undo-process-gone", "journal", fmt::format("process {} ({}) has exited since #{}: it cannot be put back",
                                                                   done.pid, one_line(done.command, 40), last->id)));
            continue;
        }
        const bool as_left = process->partitioned == done.after_partitioned && process->mask == done.after;
        const std::uint64_t journaled = journaled_generation[{done.pid, done.start_time}];
        // A walk's later steps are its own gpupart's unjournaled writes (journal.hpp, JournalWalk): the
        // process is as the walk left it while nobody else wrote its slot since.
        const bool walked = last->walk && done.generation_after == journaled && process->writer_pid == last->walk->writer_pid &&
                            process->generation >= journaled && process->generation <= journaled + last->walk->writes;
        if (!walked && (!as_left || process->generation != journaled))
            plan.findings.push_back(refusal("undo-changed-since", "journal", fmt::format("process {} was changed again since #{} (now TPCs {}): undo "
                                                                   "would overwrite that; change it explicitly instead",
                                                                   done.pid, last->id,
                                                                   process->partitioned ? process->mask.to_list() : "all")));
        PlannedChange change;
        change.pid = done.pid;
        change.start_time = done.start_time;
        change.uid = process->uid;
        change.command = process->command;
        change.before_partitioned = process->partitioned;
        change.before = process->mask;
        change.before_generation = process->generation;
        change.after_partitioned = done.before_partitioned;
        change.after = done.before;
        plan.changes.push_back(std::move(change));
    }
    if (last->rules) {  // a profile apply or disarm: put back the rules table it replaced
        ArmedRules now = read_armed_rules(registry_.directory());
        if (!same_rules(now, last->rules->after))
            plan.findings.push_back(refusal("undo-rules-changed-since", "journal",
                                            fmt::format("your rules for processes that start later were changed since #{} (now {}): undo "
                                                        "would overwrite that; `gpupart profile apply` or `profile disarm` changes them explicitly",
                                                        last->id, rules_summary(now))));
        plan.rules = RulesChange{std::move(now), last->rules->before};
    }
    auto findings = check_plan(state_, plan.changes);
    plan.findings.insert(plan.findings.end(), findings.begin(), findings.end());
    return plan;
}

Plan Controller::plan_rules(ArmedRules after, const std::string& action) const {
    Plan plan;
    plan.action = action;
    ArmedRules now = read_armed_rules(registry_.directory());
    if (!same_rules(now, after)) plan.rules = RulesChange{std::move(now), std::move(after)};
    return plan;
}

}  // namespace gpupart
