#pragma once
// The time a `gpupart set` took to reach the process: from the control block's write to the first kernel
// launch that applied it (the shim stamps that launch per GPU, registry_layout.h). The exporter sees each
// change once, whenever it scrapes after it, and keeps one histogram per GPU. It remembers only the
// processes it saw at the last scrape, so processes that exit cost nothing.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "controller/system_state.hpp"

namespace gpupart {

class SetLatency {
public:
    // Upper bounds of the histogram's buckets, in seconds (and +Inf).
    static const std::vector<double>& bounds();

    // Looks at GPU `state`'s processes: a change applied since the last look (or one never seen) is one
    // observation. Processes of this GPU not in `state` any more are forgotten.
    void observe(const SystemState& state);

    struct Histogram {
        std::vector<std::uint64_t> counts;  // per bound, not cumulative; the last is +Inf
        std::uint64_t total = 0;
        double sum_seconds = 0;
    };
    // The histogram of GPU `uuid` (all zero when nothing was observed there).
    Histogram histogram(const std::string& uuid) const;

private:
    using Key = std::tuple<std::string, int, std::uint64_t>;  // GPU, pid, start time
    std::map<Key, std::uint64_t> seen_generation_;
    std::map<std::string, Histogram> histograms_;
};

}  // namespace gpupart
