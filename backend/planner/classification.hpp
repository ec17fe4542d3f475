#pragma once
// Compute- or memory-intensive, from the shape of a fitted scaling curve (Zahaf et al., RTNS 2021, Section 3.1).
//
// Zahaf et al.'s (RTNS 2021) Definition 1: "Given an architecture, a kernel is considered to be memory intensive if,
// beyond a certain threshold, allocating more SMs does not improve its performance on that
// architecture." Its Figure 3 shows where that threshold lies: memory-intensive kernels stop speeding
// up at about half of the GPU's SMs (40 of 68), compute-intensive ones keep improving to the whole GPU.
// So the criterion here is the speedup from half of the GPU's TPCs to all of them:
//     S = rate(N) / rate(N/2)        (2 = perfectly compute-bound, 1 = saturated at half the GPU)
// The seed classifies from measurements (Figures 2 and 3) and uses C(m) = a/m + b only to generate
// synthetic tasks (Section 3.3: the model "does not aim to describe in detail the various phenomena at
// work"), so classify_measured takes S from the measured rates where they cover N/2 and N: a curve with a
// sharp knee (flat from 40 of 68) fits a/m + b poorly and its fit would call it compute-bound (S = 1.6).
// On the model itself (classify), S = C(N/2) / C(N) = 2 - b/C(N): the same test as "the share of b in the
// time at full GPU". The threshold 1.25 separates the seed's own two synthetic classes (Section 7.1:
// b = 0.02 a for compute, 0.1 a for memory, on 68 SMs) with room on both sides: S = 1.42 and S = 1.13.
//
// Optionally an NVML memory-throughput figure taken at full GPU (a fraction 0..1 of the time or of the
// bandwidth the memory was busy) breaks near-ties: Zahaf et al., RTNS 2021 names such profiling metrics as the way to
// refine Definition 1 (end of Section 3.1). The curve decides outside the ambiguous band.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/scaling_curve.hpp"

namespace gpupart {

enum class Intensity { compute, memory };
std::string_view to_string(Intensity intensity);
std::optional<Intensity> intensity_from_string(std::string_view text);

struct ClassifyOptions {
    double memory_below_speedup = 1.25;  // S below this: memory-intensive
    // S in [memory_below_speedup - ambiguity, memory_below_speedup + ambiguity]: the NVML figure, when
    // given, decides instead (memory-intensive if at or above busy_memory).
    double ambiguity = 0.08;
    double busy_memory = 0.5;
};

struct Classification {
    Intensity intensity = Intensity::compute;
    double half_to_full_speedup = 0;  // S, as above
    double serial_share = 0;          // of the fit: b / C(N)
    bool measured = false;            // S from the measured rates, not from the fit
    // classify_measured without a measured point at or below N/2 and one at N: S is the fit's, and the
    // fit is extended beyond what was measured when its fewest TPCs are above N/2.
    bool extrapolated = false;
    bool decided_by_memory_throughput = false;
    std::string reason;  // one line for the user: the figures and what they mean
};

// Classifies the model `fit` on a GPU of `total_tpcs` TPCs (the architecture Definition 1 is relative
// to). `memory_throughput`: NVML's figure at full GPU, 0..1, when available. Throws UserError on a
// total_tpcs below 2 or a figure outside 0..1.
Classification classify(const CurveFit& fit, int total_tpcs, std::optional<double> memory_throughput = std::nullopt,
                        const ClassifyOptions& options = {});

// The same from the measured `points` (fitted as `fit`): S is the mean rate measured at N over the rate
// at N/2 (interpolated linearly between the measured counts on either side; repeated counts averaged).
// Falls back to the fit when the points do not reach N or nothing was measured at or below N/2.
Classification classify_measured(const std::vector<CurvePoint>& points, const CurveFit& fit, int total_tpcs,
                                 std::optional<double> memory_throughput = std::nullopt,
                                 const ClassifyOptions& options = {});

}  // namespace gpupart
