#pragma once
// Which TPC counts `gpupart measure` walks a process through: from the most it may use down to a floor,
// spaced evenly in 1/m rather than in m, because C(m) = a/m + b is a straight line in 1/m and points
// spaced evenly along it pin a and b down best (evenly in m would crowd them all near b).
#include <vector>

namespace gpupart {

// `steps` distinct counts, most first, the first `most` and the last `floor` (fewer when there are fewer
// counts between them). Throws UserError when floor < 1, most < floor, or fewer than three counts fit
// (fit_curve needs three), saying what to change.
std::vector<int> measure_tpc_counts(int most, int floor, int steps);

}  // namespace gpupart
