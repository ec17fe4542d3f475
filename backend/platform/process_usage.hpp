#pragma once
// CPU and host memory of a process, from /proc as htop reads them: CPU% is the share of one core its user
// and system time grew by between two samples (so a process using two cores shows 200%), RSS its resident
// pages. A process that exits (or a pid reused by another, told apart by its start time) gives no value,
// never a made-up one.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpupart {

struct ProcessUsage {
    std::optional<double> cpu_percent;  // empty until two samples of the same process
    std::optional<std::uint64_t> rss_bytes;
};

class ProcessUsageSampler {
public:
    using Clock = std::chrono::steady_clock;
    explicit ProcessUsageSampler(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
    // Samples closer than `min_interval` to a process's last one keep its last CPU% (a view that refreshes
    // on a key press would otherwise divide a tick by a few milliseconds); 0: every sample measures.
    ProcessUsageSampler(std::string proc_root, Clock::duration min_interval)
        : proc_root_(std::move(proc_root)), min_interval_(min_interval) {}

    // `start_time` in clock ticks since boot (field 22 of /proc/PID/stat, as the registry keeps it); 0: any.
    ProcessUsage sample(int pid, std::uint64_t start_time, Clock::time_point now);
    void forget_except(const std::vector<std::pair<int, std::uint64_t>>& alive);

private:
    struct Last {
        std::uint64_t ticks = 0;
        Clock::time_point at;
        std::optional<double> cpu_percent;  // what the sample at `at` measured
    };
    std::string proc_root_;
    Clock::duration min_interval_{0};
    std::map<std::pair<int, std::uint64_t>, Last> last_;
};

// The fields of a /proc/PID/stat line after the command name (which may hold spaces and parentheses):
// [0] is field 3 (state), [11] utime, [12] stime, [19] starttime. Empty when the line is not one.
std::vector<std::string> stat_fields_after_comm(const std::string& line);

}  // namespace gpupart
