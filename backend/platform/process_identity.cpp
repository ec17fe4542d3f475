#include "platform/process_identity.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "platform/proc_file.hpp"
#include "platform/process_start_time.h"

namespace gpupart {

std::string_view to_string(Liveness liveness) {
    switch (liveness) {
        case Liveness::alive: return "alive";
        case Liveness::gone: return "exited";
        case Liveness::reused: return "exited (pid reused)";
    }
    return "unknown";
}

std::optional<std::uint64_t> process_start_time(int pid) {
    if (pid <= 0) return std::nullopt;
    const std::uint64_t start = gpupart_process_start_time(pid);
    if (start == 0) return std::nullopt;
    return start;
}

std::optional<unsigned> process_uid(int pid) {
    struct stat info {};
    if (pid <= 0 || ::stat(fmt::format("/proc/{}", pid).c_str(), &info) != 0) return std::nullopt;
    return info.st_uid;
}

Liveness process_liveness(int pid, std::uint64_t start_time) {
    const auto now = process_start_time(pid);
    if (!now) return Liveness::gone;
    return *now == start_time ? Liveness::alive : Liveness::reused;
}

std::string process_command(int pid) {
    if (pid <= 0) return {};
    // A process may exit between open and read: that reads as "no command", never as an exception.
    std::string text = read_proc_file(fmt::format("/proc/{}/cmdline", pid)).value_or("");
    while (!text.empty() && text.back() == '\0') text.pop_back();
    for (char& c : text)
        if (c == '\0') c = ' ';
    if (!text.empty()) return text;
    return read_first_line(fmt::format("/proc/{}/comm", pid));
}

}  // namespace gpupart
