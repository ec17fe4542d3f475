#pragma once
// The history of applied changes: who, when, what, before and after, one JSON object per line in
// $GPUPART_JOURNAL, else $XDG_STATE_HOME/gpupart/history.jsonl, else ~/.local/state/gpupart/history.jsonl.
// Per user: a user's journal holds the changes that user made, so `gpupart undo` reverts your own.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/rules_table.hpp"
#include "model/tpc_mask.hpp"

namespace gpupart {

struct JournalChange {
    int pid = 0;
    std::uint64_t start_time = 0;
    std::string command;
    bool before_partitioned = false;
    TpcMask before;
    bool after_partitioned = false;
    TpcMask after;
    std::uint64_t generation_after = 0;  // the control generation this change produced
    bool operator==(const JournalChange&) const = default;
};

struct JournalEntry {
    int id = 0;
    std::string time;  // UTC, ISO 8601
    unsigned uid = 0;
    std::string user;
    std::string action;  // "set 1234 gpc1", "profile apply serving", "undo #3"
    std::vector<JournalChange> changes;
    std::optional<int> undoes;  // the entry this one reverted
    std::optional<RulesChange> rules;  // the caller's armed profile rules, when this entry changed them
    bool operator==(const JournalEntry&) const = default;
};

class Journal {
public:
    explicit Journal(std::string path);
    static std::string default_path();
    const std::string& path() const { return path_; }

    // Every entry, oldest first. A missing file is an empty journal. Throws UserError naming the line
    // of a malformed entry.
    std::vector<JournalEntry> read() const;
    // Gives the entry the next id and the current time, appends it as one line, and returns it.
    JournalEntry append(JournalEntry entry) const;
    // The newest entry that is not an undo and has not been undone; nullopt if none.
    std::optional<JournalEntry> last_undoable() const;

private:
    std::string path_;
};

nlohmann::ordered_json journal_entry_json(const JournalEntry& entry);

}  // namespace gpupart
