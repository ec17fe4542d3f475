#pragma once
// Which TPC counts `gpupart measure` walks a process through: from the most it may use down to a floor,
// spaced evenly in log m (each a fixed fraction of the one before), with half the TPCs among them. Evenly
// in 1/m pins a/m + b down best when the model holds, but crowds the counts near the floor (66 to 2 in 7
// steps: 66, 10, 6, 5, 4, 3, 2 on an H100, nothing between 10 and 66), where a memory-bound process's
// knee is not; evenly in m would leave the small counts, where a dominates, unmeasured.
#include <vector>

namespace gpupart {

// `steps` distinct counts, most first, the first `most` and the last `floor` (fewer when there are fewer
// counts between them). Throws UserError when floor < 1, most < floor, or fewer than three counts fit
// (fit_curve needs three), saying what to change.
std::vector<int> measure_tpc_counts(int most, int floor, int steps);

}  // namespace gpupart
