#include "controller/interference.hpp"

#include <set>

#include <fmt/format.h>

namespace gpupart {
std::vector<Finding> InterferenceWatch::update(const std::vector<Sample>& samples, Clock::time_point now) {
    std::set<std::pair<int, std::uint64_t>> alive;
    for (const Sample& s : samples) {
        const auto key = std::make_pair(s.pid, s.start_time);
        alive.insert(key);
        const bool known = histories_.count(key) != 0;
        History& history = histories_[key];
        if (!known) history.first_seen = now;
        history.partitioned = s.partitioned;
        if (s.rate) history.points.push_back({now, *s.rate, s.generation});
        while (!history.points.empty() && history.points.front().at < now - tuning_.recent - tuning_.baseline) history.points.pop_front();
    }
    std::erase_if(histories_, [&](const auto& entry) { return alive.count(entry.first) == 0; });

    // The mean rate before the recent window and within it, when each has at least three points and the
    // process kept one generation (its TPCs did not change) throughout.
    struct Change {
        int pid = 0;
        double before = 0;
        double recent = 0;
        bool partitioned = false;
        bool new_here = false;  // started within the window: may be the riser, never the one slowed
    };
    std::vector<Change> changes;
    for (const auto& [key, history] : histories_) {
        double before = 0, recent = 0;
        int n_before = 0, n_recent = 0;
        bool one_generation = true;
        for (const Point& p : history.points) {
            one_generation = one_generation && p.generation == history.points.front().generation;
            if (p.at >= now - tuning_.recent) {
                recent += p.rate;
                ++n_recent;
            } else {
                before += p.rate;
                ++n_before;
            }
        }
        // A process that started within the window (the usual neighbour) had no rate before: it rose from 0.
        const bool new_here = history.first_seen > now - tuning_.baseline;
        // Two recent points at least: `gpupart top` refreshes once a second by default, the app 4 times.
        if (!one_generation || n_recent < 2 || (n_before < 3 && !new_here)) continue;
        changes.push_back({key.first, n_before > 0 && !new_here ? before / n_before : 0.0, recent / n_recent, history.partitioned,
                           new_here});
    }
    std::vector<Finding> findings;
    for (const Change& victim : changes) {
        if (!victim.partitioned || victim.new_here || victim.before < tuning_.floor || victim.recent > (1 - tuning_.drop) * victim.before) continue;
        for (const Change& other : changes) {
            if (other.pid == victim.pid) continue;
            const bool rose = other.before < tuning_.floor ? other.recent >= tuning_.floor
                                                           : other.recent >= (1 + tuning_.rise) * other.before;
            if (!rose) continue;
            findings.push_back({Severity::warning, "Bakita & Anderson, ECRTS 2025, section 6.2; docs/measurements.md",
                                fmt::format("process {}'s launch rate fell {:.0f}% ({:.0f} to {:.0f}/s) while process {}'s {} "
                                            "({:.0f} to {:.0f}/s), neither's TPCs changed: partitions split the SMs, not the "
                                            "GPU's power, clocks, L2 or memory bandwidth (see the power and clock meters)",
                                            victim.pid, 100 * (1 - victim.recent / victim.before), victim.before, victim.recent,
                                            other.pid, other.new_here ? "started" : "rose", other.before, other.recent),
                                "interference"});
            break;  // one finding per slowed process: the first neighbour that rose
        }
    }
    return findings;
}

}  // namespace gpupart
