// The journal file itself (journal.hpp): opened safely, locked, read whole, appended line by line.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "controller/journal.hpp"
#include "model/user_error.hpp"
#include "platform/user_names.hpp"

namespace gpupart {
namespace {

// Far beyond any real history (a change is a few hundred bytes); a bigger file is refused, not read.
constexpr std::size_t kJournalMaxBytes = std::size_t{256} << 20;
// A change holds the lock for milliseconds; waiting longer means a gpupart is stopped or stuck.
constexpr auto kJournalLockWait = std::chrono::seconds(10);

std::string journal_now_utc() {
    const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now);
}

void lock_journal(int fd, bool exclusive, const std::string& path) {
    const auto deadline = std::chrono::steady_clock::now() + kJournalLockWait;
    while (::flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK)
            throw UserError(fmt::format("history {}: cannot lock it: {}; nothing changed", one_line(path), std::strerror(errno)));
        if (std::chrono::steady_clock::now() > deadline)
            throw UserError(fmt::format("history {}: another gpupart has held it for {} s (stopped or stuck?); nothing "
                                        "changed: retry when it is done",
                                        one_line(path), kJournalLockWait.count()));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// Appends `line` whole or not at all: a short write (full disk, file size limit) is cut off again, so
// no torn line is left for the next reader. The caller holds the exclusive lock.
void append_journal_line(int fd, const std::string& line, const std::string& path) {
    struct stat info {};
    if (::fstat(fd, &info) != 0)
        throw UserError(fmt::format("history {}: cannot examine it: {}", one_line(path), std::strerror(errno)));
    std::size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int error = n < 0 ? errno : ENOSPC;
            if (::ftruncate(fd, info.st_size) != 0) {
                // Still a torn last line: the next reader skips it and says so.
            }
            throw UserError(fmt::format("history {}: cannot write it: {}", one_line(path), std::strerror(error)));
        }
        done += static_cast<std::size_t>(n);
    }
    // The intent must be on disk before the slots change: a machine that loses power keeps both or neither.
    if (::fdatasync(fd) != 0 && errno != EINVAL)
        throw UserError(fmt::format("history {}: cannot write it: {}", one_line(path), std::strerror(errno)));
}

struct ParsedJournal {
    std::vector<JournalEntry> entries;
    std::map<JournalId, JournalIntent> unfinished;  // intents with neither entry nor abort line
    JournalId max_id = 0;
    int skipped = 0;
    std::string first_skipped;
};

ParsedJournal parse_journal(const std::string& content, const std::string& path) {
    ParsedJournal parsed;
    std::size_t start = 0;
    int number = 0;
    while (start < content.size()) {
        std::size_t end = content.find('\n', start);
        if (end == std::string::npos) end = content.size();
        const std::string text = content.substr(start, end - start);
        start = end + 1;
        ++number;
        if (text.empty()) continue;
        JournalLine line;
        try {
            line = parse_journal_line(text);
        } catch (const UserError& error) {
            if (parsed.skipped++ == 0) parsed.first_skipped = fmt::format("{}:{}: {}", one_line(path), number, error.what());
            continue;
        }
        parsed.max_id = std::max(parsed.max_id, line.id);
        switch (line.kind) {
            case JournalLine::Kind::intent: parsed.unfinished[line.id] = std::move(line.intent); break;
            case JournalLine::Kind::aborted: parsed.unfinished.erase(line.id); break;
            case JournalLine::Kind::entry:
                parsed.unfinished.erase(line.id);
                parsed.entries.push_back(std::move(line.entry));
                break;
        }
    }
    return parsed;
}

struct LockedJournal {
    FileDescriptor fd;  // absent: no journal yet
    bool writable = false;
};

// Opens (never through a symlink, never a FIFO or device) and locks the journal. `create`: make it.
LockedJournal open_locked(const std::string& path, bool create) {
    LockedJournal journal;
    if (create) {
        std::error_code ignored;  // a parent that cannot be made shows up as the open's error
        std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
    }
    // Read-only for a user who may read but not write it (root's history, shown to its group).
    journal.writable = create || ::access(path.c_str(), W_OK) == 0 || errno == ENOENT;
    const int flags = journal.writable ? (O_RDWR | O_APPEND | (create ? O_CREAT : 0)) : O_RDONLY;
    auto file = open_regular(path, flags, Links::refuse, "history", !create, 0600);
    if (!file) return journal;
    if (static_cast<std::uint64_t>(file->size) > kJournalMaxBytes)
        throw UserError(fmt::format("history {}: {} bytes, more than any real history; move it away to start a new one: "
                                    "nothing changed", one_line(path), static_cast<long long>(file->size)));
    journal.fd = std::move(file->fd);
    lock_journal(journal.fd.get(), journal.writable, path);
    return journal;
}

// Reads the locked journal and finishes the intents of gpupart processes killed mid-change (the lock
// proves no live one is still applying them). Their endings are appended when the file is writable.
JournalContents read_locked(LockedJournal& journal, const std::string& path, ParsedJournal* keep = nullptr) {
    JournalContents contents;
    if (!journal.fd) return contents;
    if (::lseek(journal.fd.get(), 0, SEEK_SET) < 0)
        throw UserError(fmt::format("history {}: cannot read it: {}", one_line(path), std::strerror(errno)));
    ParsedJournal parsed = parse_journal(read_bounded(journal.fd.get(), kJournalMaxBytes, path, "history"), path);
    if (parsed.skipped > 0)
        contents.notes.push_back(fmt::format("history {}: skipped {} line(s) that are not journal entries, the first: {}",
                                             one_line(path), parsed.skipped, parsed.first_skipped));
    for (auto& [id, intent] : parsed.unfinished) {
        std::string found;
        const auto entry = recover_intent(intent, found);
        std::string note = fmt::format("#{} ({}) was interrupted (gpupart killed mid-change): {}", id,
                                       one_line(intent.entry.action), found);
        if (journal.writable) {
            try {
                append_journal_line(journal.fd.get(), entry ? journal_entry_line(*entry) : journal_abort_line(id, found), path);
            } catch (const UserError& error) {
                note += fmt::format(" (not recorded: {})", error.what());
            }
        }
        contents.notes.push_back(std::move(note));
        if (entry) parsed.entries.push_back(*entry);
    }
    parsed.unfinished.clear();
    contents.entries = parsed.entries;
    if (keep != nullptr) *keep = std::move(parsed);
    return contents;
}

}  // namespace

Journal::Journal(std::string path) : path_(std::move(path)) {}

JournalContents Journal::load() const {
    LockedJournal journal = open_locked(path_, false);
    JournalContents contents = read_locked(journal, path_);
    number(contents);
    return contents;
}

void Journal::learn_numbering(const Gpu& gpu) {
    gpupart::learn_numbering(numberings_, gpu);
}

void Journal::number(JournalContents& contents) const {
    int translated = 0;
    for (JournalEntry& entry : contents.entries)
        for (JournalChange& change : entry.changes) {
            if (change.numbered) continue;
            // Entries from before layout 4 name no GPU: they were made on a one-GPU view of the machine.
            const auto it = change.gpu.empty() && numberings_.size() == 1 ? numberings_.begin() : numberings_.find(change.gpu);
            if (it == numberings_.end()) continue;
            change.before = it->second.to_numbers(change.before);
            change.after = it->second.to_numbers(change.after);
            change.numbered = true;
            ++translated;
        }
    if (translated > 0)
        contents.notes.push_back(fmt::format("{} change{} written in launch-descriptor bits (before gpupart used TPC numbers) "
                                             "read as TPC numbers through the GPU's map", translated, translated == 1 ? "" : "s"));
}

JournalTransaction Journal::begin(JournalIntent intent) const {
    LockedJournal journal = open_locked(path_, true);
    ParsedJournal parsed;
    JournalContents contents = read_locked(journal, path_, &parsed);
    if (parsed.max_id == std::numeric_limits<JournalId>::max())
        throw UserError(fmt::format("history {}: its ids are used up (#{}); move it away to start a new one: nothing changed",
                                    one_line(path_), parsed.max_id));
    // The id comes from the file as it is now, under the lock: two gpuparts never take the same one.
    intent.entry.id = parsed.max_id + 1;
    intent.entry.time = journal_now_utc();
    intent.entry.uid = ::getuid();
    intent.entry.user = user_name(intent.entry.uid);
    try {
        append_journal_line(journal.fd.get(), journal_intent_line(intent), path_);
    } catch (const UserError& error) {
        throw UserError(std::string(error.what()) + "; nothing changed");
    }
    return JournalTransaction(std::move(journal.fd), path_, std::move(intent), std::move(contents.notes));
}

std::optional<JournalEntry> Journal::last_undoable() const { return gpupart::last_undoable(read()); }

std::optional<JournalEntry> last_undoable(const std::vector<JournalEntry>& entries) {
    std::set<JournalId> undone;
    for (const auto& entry : entries)
        if (entry.undoes) undone.insert(*entry.undoes);
    for (auto it = entries.rbegin(); it != entries.rend(); ++it)
        if (!it->undoes && !undone.count(it->id)) return *it;
    return std::nullopt;
}

JournalTransaction::JournalTransaction(FileDescriptor fd, std::string path, JournalIntent intent, std::vector<std::string> notes)
    : fd_(std::move(fd)), path_(std::move(path)), intent_(std::move(intent)), notes_(std::move(notes)) {}

JournalEntry JournalTransaction::commit(JournalEntry entry) {
    entry.id = intent_.entry.id;
    entry.time = intent_.entry.time;
    entry.uid = intent_.entry.uid;
    entry.user = intent_.entry.user;
    append_journal_line(fd_.get(), journal_entry_line(entry), path_);
    finished_ = true;
    return entry;
}

bool JournalTransaction::abort(const std::string& why) noexcept {
    try {
        append_journal_line(fd_.get(), journal_abort_line(intent_.entry.id, why), path_);
        finished_ = true;
        return true;
    } catch (...) {
        return false;
    }
}

}  // namespace gpupart
