#include "metrics/set_latency.hpp"

#include <algorithm>

namespace gpupart {

const std::vector<double>& SetLatency::bounds() {
    // A process that launches continuously takes microseconds to milliseconds; one between batches,
    // seconds to minutes.
    static const std::vector<double> bounds = {0.0001, 0.001, 0.01, 0.1, 0.5, 1, 5, 30, 120, 600};
    return bounds;
}

void SetLatency::observe(const SystemState& state) {
    std::set<Key> present;
    for (const ProcessState& p : state.processes) {
        const Key key{state.gpu_uuid, p.pid, p.start_time};
        present.insert(key);
        // Applied here (not pending), after a write by someone else than the process itself (its own
        // registration is no `set`), stamped by the shim at that first launch.
        const bool applied = p.has_context && !p.pending && p.launches > 0 && p.applied_ns > 0 && p.written_ns > 0;
        if (!applied || p.writer_pid == p.pid) continue;
        auto [it, first] = seen_generation_.try_emplace(key, p.generation);
        if (!first && it->second >= p.generation) continue;
        it->second = p.generation;
        const double seconds = p.applied_ns > p.written_ns ? static_cast<double>(p.applied_ns - p.written_ns) / 1e9 : 0.0;
        Histogram& h = histograms_[state.gpu_uuid];
        if (h.counts.empty()) h.counts.assign(bounds().size() + 1, 0);
        const auto bucket = std::lower_bound(bounds().begin(), bounds().end(), seconds) - bounds().begin();
        ++h.counts[static_cast<std::size_t>(bucket)];
        ++h.total;
        h.sum_seconds += seconds;
    }
    std::erase_if(seen_generation_, [&](const auto& item) {
        return std::get<0>(item.first) == state.gpu_uuid && !present.count(item.first);
    });
}

SetLatency::Histogram SetLatency::histogram(const std::string& uuid) const {
    if (const auto it = histograms_.find(uuid); it != histograms_.end()) return it->second;
    Histogram empty;
    empty.counts.assign(bounds().size() + 1, 0);
    return empty;
}

}  // namespace gpupart
