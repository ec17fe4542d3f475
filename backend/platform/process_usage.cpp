#include "platform/process_usage.hpp"

#include <set>

#include <unistd.h>

#include "platform/proc_file.hpp"

namespace gpupart {

std::vector<std::string> stat_fields_after_comm(const std::string& line) {
    const auto close = line.rfind(')');
    if (close == std::string::npos) return {};
    std::vector<std::string> fields;
    std::string field;
    for (std::size_t i = close + 1; i < line.size(); ++i) {
        const char c = line[i];
        if (c == ' ' || c == '\n') {
            if (!field.empty()) fields.push_back(std::move(field));
            field.clear();
        } else {
            field += c;
        }
    }
    if (!field.empty()) fields.push_back(std::move(field));
    return fields;
}

namespace {

std::optional<std::uint64_t> number(const std::string& text) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 19) return std::nullopt;
    return std::stoull(text);
}

}  // namespace

ProcessUsage ProcessUsageSampler::sample(int pid, std::uint64_t start_time, Clock::time_point now) {
    ProcessUsage usage;
    const std::string dir = proc_root_ + "/" + std::to_string(pid);
    const auto stat = read_proc_file(dir + "/stat", 4096);
    if (!stat) return usage;
    const auto fields = stat_fields_after_comm(*stat);
    if (fields.size() < 20) return usage;
    const auto utime = number(fields[11]), stime = number(fields[12]), started = number(fields[19]);
    if (!utime || !stime || !started || (start_time != 0 && *started != start_time)) return usage;  // another process
    if (const auto statm = read_proc_file(dir + "/statm", 4096)) {
        const auto parts = stat_fields_after_comm(")" + *statm);
        if (parts.size() >= 2)
            if (const auto pages = number(parts[1])) usage.rss_bytes = *pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    }
    const std::uint64_t ticks = *utime + *stime;
    const auto key = std::make_pair(pid, start_time);
    if (const auto it = last_.find(key); it != last_.end() && now - it->second.at < min_interval_) {
        usage.cpu_percent = it->second.cpu_percent;  // too soon to measure again: the last figure stands
        return usage;
    }
    if (const auto it = last_.find(key); it != last_.end() && ticks >= it->second.ticks) {
        const double seconds = std::chrono::duration<double>(now - it->second.at).count();
        if (seconds > 0)
            usage.cpu_percent = 100.0 * static_cast<double>(ticks - it->second.ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK)) / seconds;
    }
    last_[key] = {ticks, now, usage.cpu_percent};
    return usage;
}

void ProcessUsageSampler::forget_except(const std::vector<std::pair<int, std::uint64_t>>& alive) {
    const std::set<std::pair<int, std::uint64_t>> keep(alive.begin(), alive.end());
    std::erase_if(last_, [&](const auto& entry) { return keep.count(entry.first) == 0; });
}

}  // namespace gpupart
