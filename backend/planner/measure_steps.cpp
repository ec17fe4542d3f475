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
    // Evenly in 1/m from 1/most to 1/floor; rounding may land two on one count, so a count already taken
    // moves to the next free one below (there is always one: wanted <= most - floor + 1).
    for (int i = 0; i < wanted; ++i) {
        const double inverse = 1.0 / most + (1.0 / floor - 1.0 / most) * i / (wanted - 1);
        int count = std::clamp(static_cast<int>(std::lround(1.0 / inverse)), floor, most);
        if (!counts.empty()) count = std::min(count, counts.back() - 1);
        // Leave room for the counts still to come above the floor.
        count = std::max(count, floor + (wanted - 1 - i));
        counts.push_back(count);
    }
    return counts;
}

}  // namespace gpupart
