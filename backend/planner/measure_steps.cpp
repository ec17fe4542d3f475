#include "planner/measure_steps.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {

std::vector<int> measure_tpc_counts(int most, int floor, int steps) {
    if (floor < 1) throw UserError(fmt::format("--floor {}: a process needs at least 1 TPC", floor));
    if (steps < 3) throw UserError(fmt::format("--steps {}: the fit needs at least 3 TPC counts", steps));
    if (most < floor)
        throw UserError(fmt::format("the process may use {} TPCs, fewer than the floor of {}: lower --floor", most, floor));
    if (most - floor + 1 < 3)
        throw UserError(fmt::format("only {} TPC count{} between the floor ({}) and the {} TPCs the process may use: the fit "
                                    "needs 3; lower --floor or free TPCs for it", most - floor + 1, most == floor ? "" : "s",
                                    floor, most));
    const int wanted = std::min(steps, most - floor + 1);
    std::vector<int> counts;
    // Evenly in log m from most to floor (each count a fixed fraction of the one before); rounding may land
    // two on one count, so a count already taken moves to the next free one below.
    const double ratio = std::pow(static_cast<double>(floor) / most, 1.0 / (wanted - 1));
    for (int i = 0; i < wanted; ++i) {
        int count = std::clamp(static_cast<int>(std::lround(most * std::pow(ratio, i))), floor, most);
        if (!counts.empty()) count = std::min(count, counts.back() - 1);
        // Leave room for the counts still to come above the floor.
        count = std::max(count, floor + (wanted - 1 - i));
        counts.push_back(count);
    }
    // Half the TPCs is measured, not fitted: the class is the speedup from most/2 to most (Zahaf et al., RTNS 2021
    // Definition 1), and a curve with a knee (a copy saturating memory) is where a/m + b is least exact.
    // The count nearest most/2 moves there where that keeps the counts distinct and in order.
    const int half = (most + 1) / 2;
    if (wanted >= 4 && half > floor && half < most) {
        auto nearest = std::min_element(counts.begin() + 1, counts.end() - 1,
                                        [half](int a, int b) { return std::abs(a - half) < std::abs(b - half); });
        const int above = *(nearest - 1);
        const int below = *(nearest + 1);
        if (half < above && half > below) *nearest = half;
    }
    return counts;
}

}  // namespace gpupart
