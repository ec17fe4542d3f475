#pragma once
// Who a process is, from /proc: pid plus start time names a process for its whole life, so a reused
// pid is never mistaken for the process that registered.
#include <cstdint>
#include <optional>
#include <string>

namespace gpupart {

enum class Liveness { alive, gone, reused };

// A process as a front end chose it (a row, a drop target, a key on a selection): its pid and the start
// time it had then. A request carrying it is refused if that pid names another process by the time it is
// planned. start_time 0: whatever process has the pid then (a pid a person typed on the command line).
struct ProcessRef {
    int pid = 0;
    std::uint64_t start_time = 0;
    bool operator==(const ProcessRef&) const = default;
};
std::string_view to_string(Liveness liveness);

std::optional<std::uint64_t> process_start_time(int pid);  // nullopt: no such process
std::optional<unsigned> process_uid(int pid);
Liveness process_liveness(int pid, std::uint64_t start_time);
// The command line of a process, arguments joined by spaces ("python3 serve.py"); its name (comm) where
// it has no command line (a kernel thread, a zombie); empty when /proc does not show it.
std::string process_command(int pid);

}  // namespace gpupart
