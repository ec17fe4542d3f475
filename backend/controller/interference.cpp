#include "controller/interference.hpp"

#include <fmt/format.h>

namespace gpupart {

std::vector<Finding> interference_findings(const SystemState& state, const LaunchRates& rates) {
    std::vector<Finding> findings;
    const auto change_of = [&](const ProcessState& p) -> std::optional<LaunchRates::Change> {
        if (!p.partitioned) return std::nullopt;
        const auto change = rates.last_change(p.pid, p.start_time);
        if (!change || change->before < kInterferenceMinRate) return std::nullopt;
        return change;
    };
    for (const ProcessState& victim : state.processes) {
        const auto fell = change_of(victim);
        if (!fell || fell->after > fell->before * (1 - kInterferenceChange)) continue;
        const ProcessState* riser = nullptr;
        double most = 0;
        for (const ProcessState& other : state.processes) {
            if (other.pid == victim.pid) continue;
            const auto rose = change_of(other);
            if (!rose || rose->after < rose->before * (1 + kInterferenceChange)) continue;
            if (const double ratio = rose->after / rose->before; ratio > most) {
                most = ratio;
                riser = &other;
            }
        }
        if (riser == nullptr) continue;
        const auto rose = *change_of(*riser);
        findings.push_back({Severity::warning, "shared memory bandwidth and power (measured on the H100)",
                            fmt::format("process {}'s launch rate fell from {:.0f}/s to {:.0f}/s while process {}'s on this GPU rose "
                                        "from {:.0f}/s to {:.0f}/s: its partition keeps its SMs, but memory bandwidth and power "
                                        "are shared, so the neighbour is likely slowing it",
                                        victim.pid, fell->before, fell->after, riser->pid, rose.before, rose.after),
                            "interference"});
    }
    return findings;
}

}  // namespace gpupart
