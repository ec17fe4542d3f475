#pragma once
// The history of applied changes: who, when, what, before and after, one JSON object per line in
// $GPUPART_JOURNAL, else $XDG_STATE_HOME/gpupart/history.jsonl, else ~/.local/state/gpupart/history.jsonl.
// Per user: a user's journal holds the changes that user made, so `gpupart undo` reverts your own.
//
// Applying and journaling are one step from the user's view. Under the journal's
// own lock (flock on the file, held for the whole change) a change is first written as an intent
// (its id taken from the file's content under that lock), then applied to the slots, then finished
// with its entry (or an abort line when nothing of it is in effect). A gpupart killed between the
// steps leaves an intent without an ending: the next reader (under the lock, so never while the
// change is still running) compares each slot's generation with the one the intent planned, writes
// what is in effect as an ordinary entry marked "recovered", and says so once.
// A line that is not a journal entry (torn by an older gpupart, edited by hand) is skipped, and every
// reader says so once, naming the first such line; ids are never reused, so nothing it named is lost
// to a later entry.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/rules_table.hpp"
#include "model/gpu.hpp"
#include "model/tpc_mask.hpp"
#include "registry/slot_numbering.hpp"
#include "platform/safe_file.hpp"

namespace gpupart {

// Ids are 64-bit everywhere they are parsed and printed; ids from 1 up.
using JournalId = std::int64_t;

struct JournalChange {
    int pid = 0;
    std::string gpu;  // the GPU (UUID) whose mask changed; "" in entries written before layout 4
    std::uint64_t start_time = 0;
    std::string command;
    bool before_partitioned = false;
    TpcMask before;
    bool after_partitioned = false;
    TpcMask after;
    std::uint64_t generation_after = 0;  // the control generation this change produced
    // before and after are TPC numbers. Entries written before gpupart used TPC numbers hold launch-descriptor
    // bits there: read with numbered false, and translated when the journal knows that GPU's map.
    bool numbered = true;
    // The masks as the slot holds them (descriptor bits), so a reader that finishes an interrupted change can
    // compare them with the slot without knowing the GPU's map; empty when not known.
    std::optional<TpcMask> before_bits;
    std::optional<TpcMask> after_bits;
    bool operator==(const JournalChange&) const = default;
};

// A change that the gpupart which made it goes on changing without journaling each step: `gpupart
// measure`'s walk through TPC counts. Its entry journals the walk's first mask; the walk's
// later masks are compare-and-set writes by that gpupart alone, at most `writes` of them, so while the
// entry is not undone the process is "as this entry left it" when its generation lies within
// [generation_after, generation_after + writes] and the slot's last writer is `writer_pid`. A walk that
// ends normally is closed by an undo of its entry (the TPCs from before the walk put back); one whose
// gpupart was killed stays undoable, and `gpupart undo` puts those TPCs back.
struct JournalWalk {
    int writer_pid = 0;
    std::uint64_t writes = 0;
    bool operator==(const JournalWalk&) const = default;
};

struct JournalEntry {
    JournalId id = 0;
    std::string time;  // UTC, ISO 8601
    unsigned uid = 0;
    std::string user;
    std::string action;  // "set 1234 gpc1", "profile apply serving", "undo #3"
    std::vector<JournalChange> changes;
    std::optional<JournalId> undoes;  // the entry this one reverted
    std::optional<RulesChange> rules;  // the caller's armed profile rules, when this entry changed them
    // Set when a later reader finished this entry for a gpupart that was killed in the middle: what it found.
    std::optional<std::string> recovered;
    std::optional<JournalWalk> walk;  // a walk's first step (see JournalWalk)
    bool operator==(const JournalEntry&) const = default;
};

// A change about to be applied: the entry (generation_after not known yet), the generation each
// change's compare-and-set expects, and the registry holding the slots.
struct JournalIntent {
    JournalEntry entry;
    std::vector<std::uint64_t> before_generations;  // one per entry.changes
    std::string registry;
};

struct JournalContents {
    std::vector<JournalEntry> entries;  // oldest first
    std::vector<std::string> notes;     // one line each: skipped lines, intents finished now
};

// One change being applied: holds the journal's lock from begin() until it is destroyed.
class JournalTransaction {
public:
    JournalTransaction(JournalTransaction&&) noexcept = default;
    JournalTransaction& operator=(JournalTransaction&&) noexcept = default;
    ~JournalTransaction() = default;

    JournalId id() const { return intent_.entry.id; }
    // What reading the journal under the lock found (recovered intents, skipped lines).
    const std::vector<std::string>& notes() const { return notes_; }
    // Appends the finished entry (id, time and user are the intent's); throws UserError when the line
    // cannot be written (then the file is as it was before this call).
    JournalEntry commit(JournalEntry entry);
    // Records that nothing of this change is in effect; false when that could not be written (the
    // intent then stays, and the next reader finds it is not in effect).
    bool abort(const std::string& why) noexcept;

private:
    friend class Journal;
    JournalTransaction(FileDescriptor fd, std::string path, JournalIntent intent, std::vector<std::string> notes);
    FileDescriptor fd_;
    std::string path_;
    JournalIntent intent_;
    std::vector<std::string> notes_;
    bool finished_ = false;
};

class Journal {
public:
    explicit Journal(std::string path);
    static std::string default_path();
    const std::string& path() const { return path_; }

    // Every entry, oldest first, interrupted changes finished first (see above). A missing file is an
    // empty journal. Throws UserError when the journal is not a regular file, is locked for too long or
    // is larger than any real one.
    // Entries in descriptor bits (written before TPC numbers) are translated with the maps of GPUs learnt
    // here; those of other GPUs stay unnumbered.
    JournalContents load() const;
    std::vector<JournalEntry> read() const { return load().entries; }
    void learn_numbering(const Gpu& gpu);
    // Locks the journal, finishes interrupted changes, gives `intent` the next id and appends it.
    // Throws UserError (nothing applied yet, so nothing changed) when it cannot.
    JournalTransaction begin(JournalIntent intent) const;
    // The newest entry that is not an undo and has not been undone; nullopt if none.
    std::optional<JournalEntry> last_undoable() const;

private:
    void number(JournalContents& contents) const;
    std::string path_;
    TpcNumberings numberings_;
};

nlohmann::ordered_json journal_entry_json(const JournalEntry& entry);
// The newest of `entries` that is not an undo and has not been undone; nullopt if none.
std::optional<JournalEntry> last_undoable(const std::vector<JournalEntry>& entries);

// The journal's lines, as journal_file.cpp reads and writes them (journal.cpp).
struct JournalLine {
    enum class Kind { entry, intent, aborted };
    Kind kind = Kind::entry;
    JournalEntry entry;    // entry; intent: intent.entry
    JournalIntent intent;  // intent
    JournalId id = 0;      // every kind
    std::string why;       // aborted
};
std::string journal_entry_line(const JournalEntry& entry);
std::string journal_intent_line(const JournalIntent& intent);
std::string journal_abort_line(JournalId id, const std::string& why);
// Throws UserError naming what is wrong with the line.
JournalLine parse_journal_line(const std::string& text);

// What of an interrupted change is in effect now, by its slots' generations and masks and the armed
// rules (journal_recovery.cpp): the entry to keep (marked recovered), or nullopt when nothing of it is
// in effect. `note` says what was found, in one line.
std::optional<JournalEntry> recover_intent(const JournalIntent& intent, std::string& note);

}  // namespace gpupart
