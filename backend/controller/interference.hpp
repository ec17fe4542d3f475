#pragma once
// Interference made visible: TPC partitions split the SMs, not the GPU's power, clocks, L2 or HBM (README,
// "Evidence": a partitioned matmul runs 1.08-1.12 times slower beside a compute-heavy neighbour, 1.4-2.3 times
// beside a memory-heavy one). Fed each process's launch rate at every refresh of a front end, the watch says
// when a partitioned process's rate falls while another process's rate on the same GPU rises and neither's
// TPCs changed: the likely cause is the neighbour, which the TPC map alone never shows.
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "controller/finding.hpp"

namespace gpupart {

class InterferenceWatch {
public:
    using Clock = std::chrono::steady_clock;

    struct Sample {
        int pid = 0;
        std::uint64_t start_time = 0;
        bool partitioned = false;
        std::uint64_t generation = 0;  // its control generation: a change of its TPCs explains a change of rate
        std::optional<double> rate;    // launches (and graph replays) per second; empty until measured
    };

    // Thresholds: a fall of at least `drop` (0.3: to 70% or less) of a rate of at least `floor` per second,
    // and a rise of at least `rise` (or a neighbour that was idle), the recent `recent` against the `baseline`
    // before it.
    struct Tuning {
        std::chrono::milliseconds recent{2000};
        std::chrono::milliseconds baseline{10000};
        double drop = 0.3;
        double rise = 0.3;
        double floor = 10;
    };
    InterferenceWatch() = default;
    explicit InterferenceWatch(Tuning tuning) : tuning_(tuning) {}

    // One refresh of one GPU's processes; returns the findings that hold now (warnings, id "interference").
    std::vector<Finding> update(const std::vector<Sample>& samples, Clock::time_point now);

private:
    struct Point {
        Clock::time_point at;
        double rate = 0;
        std::uint64_t generation = 0;
    };
    struct History {
        bool partitioned = false;
        Clock::time_point first_seen;  // a neighbour that started within the window rose from nothing
        std::deque<Point> points;
    };
    Tuning tuning_;
    std::map<std::pair<int, std::uint64_t>, History> histories_;
};

}  // namespace gpupart
