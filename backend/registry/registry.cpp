#include "registry/registry.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

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

Registry::Registry(std::string directory) : directory_(std::move(directory)) {}

std::string Registry::default_directory() {
    char buffer[4096];
    if (gpupart_registry_dir(buffer, sizeof buffer) != 0) throw RegistryError("GPUPART_REGISTRY_DIR is too long");
    return buffer;
}

std::vector<RegistryEntry> Registry::list() const {
    std::vector<RegistryEntry> entries;
    std::error_code error;
    for (const auto& item : std::filesystem::directory_iterator(directory_, error)) {
        const std::string path = item.path().string();
        if (!path.ends_with(GPUPART_SLOT_SUFFIX)) continue;
        RegistryEntry entry;
        entry.path = path;
        try {
            const SlotFile slot = SlotFile::open(path, false);
            entry.record = slot.read();
            entry.liveness = process_liveness(entry.record->pid, entry.record->start_time);
            if (auto forged = ownership_problem(*entry.record)) {
                entry.problem = *forged;
                entry.record.reset();
            }
        } catch (const RegistryError& problem) {
            entry.problem = problem.what();
        }
        entries.push_back(std::move(entry));
    }
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
    const std::string path = fmt::format("{}/{}-{}{}", directory_, pid, *start, GPUPART_SLOT_SUFFIX);
    if (!std::filesystem::exists(path)) {
        // Say whether an older process with this pid was registered, so a reused pid is explained.
        for (const auto& entry : list())
            if (entry.record && entry.record->pid == pid)
                throw RegistryError(fmt::format("process {} is not the one gpupart registered: that one exited and its "
                                                "pid now belongs to another process", pid));
        throw RegistryError(fmt::format("process {} is not partitioned by gpupart (start it with `gpupart run`, or "
                                        "with LD_PRELOAD=libgpupart-shim.so; registry {})", pid, directory_));
    }
    return path;
}

namespace {
SlotRecord checked(SlotRecord record) {
    if (auto forged = ownership_problem(record)) throw RegistryError(*forged);
    return record;
}
}  // namespace

SlotRecord Registry::find_live(int pid) const { return checked(SlotFile::open(slot_path_for(pid), false).read()); }

SlotRecord Registry::set_mask(int pid, bool has_mask, const TpcMask& allowed, const TpcMask& real_tpcs,
                              const Expectation& expect) const {
    SlotFile slot = SlotFile::open(slot_path_for(pid), true);
    const SlotRecord before = checked(slot.read());
    if (expect.start_time && before.start_time != *expect.start_time)
        throw RegistryError(fmt::format("process {} is not the one planned for: that one exited and its pid was reused; "
                                        "nothing changed", pid));
    // The file name pins pid and start time; check once more that this process still runs.
    if (process_liveness(before.pid, before.start_time) != Liveness::alive)
        throw RegistryError(fmt::format("process {} exited; nothing changed", pid));
    slot.write_control(has_mask, allowed, real_tpcs, expect.generation);
    return slot.read();
}

int Registry::collect_garbage() const {
    int removed = 0;
    for (const auto& entry : list()) {
        if (!entry.record || entry.liveness == Liveness::alive) continue;
        std::error_code error;
        if (std::filesystem::remove(entry.path, error)) ++removed;
    }
    return removed;
}

}  // namespace gpupart
