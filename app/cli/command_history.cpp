// gpupart history / gpupart undo: the journal of applied changes, and reverting the newest one.
#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/user_error.hpp"
#include "plan_output.hpp"

namespace gpupart::cli {

Command add_history_command(CLI::App& app) {
    auto json = std::make_shared<bool>(false);
    CLI::App* history = app.add_subcommand("history", "Changes applied by you, oldest first (what `gpupart undo` reverts)");
    history->add_flag("--json", *json, "Machine-readable output");
    return {history, [json] {
                Journal journal(Journal::default_path());
                for (const Gpu& gpu : machine_gpus_for_numbers()) journal.learn_numbering(gpu);
                const JournalContents contents = journal.load();
                const auto& entries = contents.entries;
                for (const auto& note : contents.notes) fmt::print(stderr, "gpupart: note: {}\n", note);
                if (*json) {
                    auto out = nlohmann::ordered_json{{"journal", journal.path()}, {"entries", nlohmann::ordered_json::array()}};
                    for (const auto& entry : entries) out["entries"].push_back(journal_entry_json(entry));
                    fmt::print("{}\n", json_answer(out));
                    return 0;
                }
                if (entries.empty()) {
                    fmt::print("no change applied yet (history {})\n", journal.path());
                    return 0;
                }
                for (const auto& entry : entries) {
                    fmt::print("#{:<4} {}  {:<10} {}\n", entry.id, one_line(entry.time), one_line(entry.user), one_line(entry.action));
                    for (const auto& c : entry.changes)
                        fmt::print("        process {} ({}): {} -> {}\n", c.pid, one_line(c.command, 50),
                                   c.before_partitioned ? mask_text(c.before, c.numbered) : "all",
                                   c.after_partitioned ? mask_text(c.after, c.numbered) : "all");
                    if (entry.rules) fmt::print("        {}\n", one_line(rules_change_text(*entry.rules)));
                    if (entry.recovered) fmt::print("        finished after gpupart was killed: {}\n", one_line(*entry.recovered));
                    // A walk's later steps are not in the history (journal.hpp, JournalWalk): say so where it starts.
                    if (entry.walk)
                        fmt::print("        then walked through TPC counts by gpupart {} (not journaled step by step); {}\n",
                                   entry.walk->writer_pid,
                                   std::any_of(entries.begin(), entries.end(), [&](const JournalEntry& e) { return e.undoes == entry.id; })
                                       ? "put back by its undo below"
                                       : "not put back yet: `gpupart undo` puts back the TPCs from before it");
                }
                return 0;
            }};
}

Command add_undo_command(CLI::App& app) {
    struct HistoryOptions {
        SnapshotOptions snapshot;
        bool dry_run = false;
        bool json = false;
    };
    auto options = std::make_shared<HistoryOptions>();
    CLI::App* undo = app.add_subcommand("undo", "Revert your newest change that is not undone yet");
    undo->add_flag("--dry-run", options->dry_run, "Show what undo would do; change nothing");
    undo->add_flag("--json", options->json, "Machine-readable output");
    add_snapshot_options(*undo, options->snapshot);
    return {undo, [options] {
                // Undoing a change of rules alone (a disarm, a profile that matched no running process)
                // names no TPC: like the change itself, it needs no topology of this machine.
                const auto last = Journal(Journal::default_path()).last_undoable();
                const bool rules_only = last && last->changes.empty() && last->rules;
                // Without --gpu, the GPU the change was made on (the journal says which).
                const std::string gpu = last && !last->changes.empty() ? last->changes.front().gpu : "";
                Controller controller = rules_only ? make_rules_controller() : make_controller_for_gpu_key(options->snapshot, gpu);
                return plan_and_apply(controller, controller.plan_undo(), options->json, options->dry_run);
            }};
}

}  // namespace gpupart::cli
