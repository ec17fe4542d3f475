#include "registry/registry.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/user_names.hpp"
#include "registry/registry_slot.h"

namespace gpupart {

// A slot is the process's own only if the kernel says the file belongs to the user it claims, and
// (while it runs) to the user who runs it: anybody may create files in the sticky registry directory,
// so a file that claims another user's process is a forgery and is never shown or written.
std::optional<std::string> ownership_problem(const SlotRecord& record) {
    if (record.file_owner != 0 && record.file_owner != record.uid)
        return fmt::format("{}: claims process {} of {} but the file belongs to {}: ignored", record.path, record.pid,
                           user_name(record.uid), user_name(record.file_owner));
    const auto runner = process_uid(record.pid);
    if (runner && process_liveness(record.pid, record.start_time) == Liveness::alive && *runner != record.file_owner &&
        record.file_owner != 0)
        return fmt::format("{}: process {} runs as {} but the file belongs to {}: ignored", record.path, record.pid,
                           user_name(*runner), user_name(record.file_owner));
    return std::nullopt;
}

Registry::Registry(std::string directory, const std::vector<Gpu>& gpus)
    : directory_(std::move(directory)), numberings_(numberings_of(gpus)) {}

void Registry::learn_numbering(const Gpu& gpu) {
    gpupart::learn_numbering(numberings_, gpu);
}

SlotRecord Registry::numbered(SlotRecord record) const {
    number_slot_masks(record, numberings_);
    return record;
}

std::string Registry::default_directory() {
    char buffer[4096];
    if (gpupart_registry_dir(buffer, sizeof buffer) != 0) throw RegistryError("GPUPART_REGISTRY_DIR is too long");
    return buffer;
}

std::optional<std::string> user_directory(const std::string& root, unsigned uid, bool create) {
    char why[512] = "";
    const bool named = std::getenv(GPUPART_ENV_REGISTRY_DIR) != nullptr && root == std::getenv(GPUPART_ENV_REGISTRY_DIR);
    int error = gpupart_registry_root_check(root.c_str(), create && named, why, sizeof why);
    if (error == -ENOENT && !create) return std::nullopt;
    if (error != 0) throw RegistryError(one_line(why[0] ? why : root + ": " + std::strerror(-error)));
    char dir[512];
    error = gpupart_user_dir(root.c_str(), uid, create, dir, sizeof dir);
    if (error == -ENOENT && !create) return std::nullopt;
    if (error != 0)
        throw RegistryError(fmt::format("registry {}: cannot make the directory of {}: {}", one_line(root), user_name(uid),
                                        std::strerror(-error)));
    return std::string(dir);
}

bool Registry::check_root() const {
    char why[512] = "";
    const int error = gpupart_registry_root_check(directory_.c_str(), 0, why, sizeof why);
    if (error == -ENOENT) return false;
    if (error != 0) throw RegistryError(one_line(why[0] ? why : directory_ + ": " + std::strerror(-error)));
    return true;
}

namespace {
// "<pid>-<start time>.slot": what the file name promises, checked against the header it holds.
std::optional<std::pair<int, std::uint64_t>> slot_name(const std::string& name) {
    int pid = 0;
    unsigned long long start = 0;
    int used = 0;
    if (std::sscanf(name.c_str(), "%d-%llu%n", &pid, &start, &used) != 2 || pid <= 0) return std::nullopt;
    if (name.substr(static_cast<std::size_t>(used)) != GPUPART_SLOT_SUFFIX) return std::nullopt;
    if (name != fmt::format("{}-{}{}", pid, start, GPUPART_SLOT_SUFFIX)) return std::nullopt;  // no "+1", " 1", "01"
    return std::pair{pid, static_cast<std::uint64_t>(start)};
}

std::vector<std::string> names_in(const std::string& dir) {
    std::vector<std::string> names;
    std::error_code error;
    for (const auto& item : std::filesystem::directory_iterator(dir, error)) names.push_back(item.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}
}  // namespace

void Registry::list_user_dir(const std::string& dir, unsigned dir_uid, std::vector<RegistryEntry>& entries) const {
    for (const auto& name : names_in(dir)) {
        if (!name.ends_with(GPUPART_SLOT_SUFFIX)) continue;
        RegistryEntry entry;
        entry.path = dir + "/" + name;
        entry.dir_uid = dir_uid;
        try {
            const SlotFile slot = SlotFile::open(entry.path, false);
            entry.record = slot.read();
            const auto named = slot_name(name);
            if (!named || named->first != entry.record->pid || named->second != entry.record->start_time) {
                entry.problem = fmt::format("{}: its name does not match the process it describes (pid {}, start {}): "
                                            "ignored", one_line(entry.path), entry.record->pid, entry.record->start_time);
                entry.record.reset();
            } else if (entry.record->file_owner != dir_uid && entry.record->file_owner != 0) {
                entry.problem = fmt::format("{}: belongs to {} but lies in the directory of {}: ignored", one_line(entry.path),
                                            user_name(entry.record->file_owner), user_name(dir_uid));
                entry.record.reset();
            } else {
                entry.liveness = process_liveness(entry.record->pid, entry.record->start_time);
                if (auto forged = ownership_problem(*entry.record)) {
                    entry.problem = one_line(*forged);
                    entry.record.reset();
                }
            }
        } catch (const RegistryError& problem) {
            entry.problem = one_line(problem.what());
        }
        entries.push_back(std::move(entry));
    }
}

std::vector<RegistryEntry> Registry::every_file() const {
    std::vector<RegistryEntry> entries;
    if (!check_root()) return entries;
    for (const auto& name : names_in(directory_)) {
        const std::string path = directory_ + "/" + name;
        std::uint32_t uid = 0;
        char why[512] = "";
        const int verdict = gpupart_user_dir_check(directory_.c_str(), name.c_str(), &uid, why, sizeof why);
        if (verdict == 0) {
            list_user_dir(path, uid, entries);
        } else if (verdict != -ENOENT) {
            entries.push_back(RegistryEntry{path, std::nullopt, Liveness::gone, one_line(why[0] ? why : path), std::nullopt, 0, false});
        } else if (name.ends_with(GPUPART_SLOT_SUFFIX)) {
            // Not in a user directory: an older shim's slot (layout 2) or something planted. Read it only
            // to say what it is (a FIFO cannot block the read); never trusted, never collected.
            RegistryEntry entry{path, std::nullopt, Liveness::gone, "", std::nullopt, 0, false};
            try {
                SlotFile::open(path, false);
                entry.problem = fmt::format("{}: a slot outside any user directory: ignored", one_line(path));
            } catch (const RegistryError& problem) {
                entry.problem = one_line(problem.what());
            }
            entries.push_back(std::move(entry));
        }
    }
    return entries;
}

namespace {
// One entry per process, whatever the number of files naming it (anybody can copy a slot into twin
// directories of their own, or plant files named after another user's process in theirs). A file
// named after a running process lies either in the directories of the user running it (the plain one,
// then its twins by name: the order in which the shim chooses where to register, gpupart_user_dir), or
// in a stranger's, where it is never taken for the process's slot. The first file in that order is the
// process's; later ones are counted as copies. Files of processes that are gone are grouped by
// directory owner (who ran them can no longer be told). `entries` come in directory order.
std::vector<RegistryEntry> one_per_process(std::vector<RegistryEntry> entries) {
    std::map<std::pair<int, std::uint64_t>, std::optional<unsigned>> runners;  // of live processes, by name
    std::map<std::tuple<int, std::uint64_t, unsigned, bool>, std::size_t> chosen;   // -> index in `kept`
    std::vector<RegistryEntry> kept;
    for (RegistryEntry& entry : entries) {
        const auto named = entry.dir_uid ? slot_name(std::filesystem::path(entry.path).filename().string()) : std::nullopt;
        if (!named) {
            kept.push_back(std::move(entry));
            continue;
        }
        auto [runner, fresh] = runners.try_emplace(*named);
        if (fresh && process_liveness(named->first, named->second) == Liveness::alive) runner->second = process_uid(named->first);
        const bool root_made = entry.record && entry.record->file_owner == 0;
        const bool stranger = runner->second && *runner->second != *entry.dir_uid && !root_made;
        if (stranger) {
            entry.stranger = true;
            entry.record.reset();
            if (entry.problem.empty())  // else its own problem (a forged owner, not a slot...) says what it is
                entry.problem = fmt::format("{}: named after process {} of {}, but in the directory of {}: not its "
                                            "slot, ignored", one_line(entry.path), named->first, user_name(*runner->second),
                                            user_name(*entry.dir_uid));
        }
        const unsigned owner = runner->second && !stranger ? *runner->second : *entry.dir_uid;
        const auto key = std::tuple{named->first, named->second, owner, stranger};
        if (const auto found = chosen.find(key); found != chosen.end()) {
            ++kept[found->second].copies;
            continue;
        }
        chosen.emplace(key, kept.size());
        kept.push_back(std::move(entry));
    }
    return kept;
}
}  // namespace

std::vector<RegistryEntry> Registry::list() const {
    std::vector<RegistryEntry> entries = one_per_process(every_file());
    for (RegistryEntry& entry : entries)
        if (entry.record) number_slot_masks(*entry.record, numberings_);
    std::sort(entries.begin(), entries.end(), [](const RegistryEntry& a, const RegistryEntry& b) {
        const int pid_a = a.record ? a.record->pid : 0;
        const int pid_b = b.record ? b.record->pid : 0;
        return pid_a != pid_b ? pid_a < pid_b : a.path < b.path;
    });
    return entries;
}

std::string Registry::slot_path_for(int pid) const {
    if (pid <= 0) throw RegistryError(fmt::format("{} is not a process id", pid));
    const auto start = process_start_time(pid);
    if (!start) throw RegistryError(fmt::format("no process {} is running", pid));
    bool older = false;
    const std::string name = fmt::format("/{}-{}{}", pid, *start, GPUPART_SLOT_SUFFIX);
    for (const auto& entry : list()) {
        // This process's slot that cannot be used: say why (a version, a truncation, a forgery). A file
        // with its name in another user's directory, or outside any, is not its slot and changes nothing.
        if (entry.stranger || !entry.dir_uid) continue;
        if (!entry.record && entry.path.ends_with(name)) throw RegistryError(entry.problem);
        if (!entry.record || entry.record->pid != pid) continue;
        if (entry.record->start_time == *start) return entry.path;
        older = true;
    }
    // Say whether an older process with this pid was registered, so a reused pid is explained.
    if (older)
        throw RegistryError(fmt::format("process {} is not the one gpupart registered: that one exited and its "
                                        "pid now belongs to another process", pid));
    throw RegistryError(fmt::format("process {} is not partitioned by gpupart (start it with `gpupart run`, or "
                                    "with LD_PRELOAD=libgpupart-shim.so; registry {})", pid, directory_));
}

namespace {
SlotRecord checked(SlotRecord record) {
    if (auto forged = ownership_problem(record)) throw RegistryError(*forged);
    return record;
}
}  // namespace

SlotRecord Registry::find_live(int pid) const { return numbered(checked(SlotFile::open(slot_path_for(pid), false).read())); }

SlotRecord Registry::set_mask(int pid, const std::string& gpu_uuid, bool has_mask, const TpcMask& allowed, const TpcMask& real_tpcs,
                              const Expectation& expect) const {
    SlotFile slot = SlotFile::open(slot_path_for(pid), true);
    const SlotRecord before = checked(slot.read());
    if (expect.start_time && before.start_time != *expect.start_time)
        throw RegistryError(fmt::format("process {} is not the one planned for: that one exited and its pid was reused; "
                                        "nothing changed", pid));
    // The file name pins pid and start time; check once more that this process still runs.
    if (process_liveness(before.pid, before.start_time) != Liveness::alive)
        throw RegistryError(fmt::format("process {} exited; nothing changed", pid));
    const auto numbering = numberings_.find(gpu_uuid);
    if (numbering == numberings_.end())
        throw RegistryError(fmt::format("{}: gpupart does not know which launch-descriptor bit each TPC number is on this GPU "
                                        "(run `gpupart probe` on it); nothing changed", gpu_uuid));
    slot.write_control(gpu_uuid, has_mask, numbering->second.to_bits(allowed), numbering->second.to_bits(real_tpcs), expect.generation);
    return numbered(slot.read());
}

std::vector<int> Registry::wait_for_graph_remasks(const std::vector<std::pair<int, std::uint64_t>>& changes,
                                                  std::chrono::milliseconds budget) const {
    const auto deadline = std::chrono::steady_clock::now() + budget;
    std::vector<std::pair<int, std::uint64_t>> waiting = changes;
    for (;;) {
        std::erase_if(waiting, [&](const std::pair<int, std::uint64_t>& change) {
            try {
                const SlotRecord record = SlotFile::open(slot_path_for(change.first), false).read();
                return !record.graphs.remasker || record.graphs.execs == 0 ||
                       record.graphs.settled_generation >= change.second ||
                       process_liveness(record.pid, record.start_time) != Liveness::alive;
            } catch (const RegistryError&) {
                return true;  // gone or unreadable: nothing to wait for
            }
        });
        if (waiting.empty() || std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::vector<int> pids;
    for (const auto& change : waiting) pids.push_back(change.first);
    return pids;
}

int Registry::collect_garbage() const {
    int removed = 0;
    for (const auto& entry : every_file()) {  // copies of an exited process's slot too
        if (!entry.record || entry.liveness == Liveness::alive) continue;
        std::error_code error;
        if (std::filesystem::remove(entry.path, error)) ++removed;
    }
    return removed;
}

}  // namespace gpupart
