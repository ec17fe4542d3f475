#pragma once
// A process's measured scaling curve and its fit to Zahaf et al.'s (RTNS 2021) execution-time model (Section 3.3):
//     C(m) = a/m + b
// where m is the process's TPC count, C(m) the time per unit of progress (seconds per launch, 1/rate),
// a the part of the work that is spread over the TPCs and b the part that does not shrink as TPCs are
// added (memory bandwidth, the CPU between launches, launch latency). The model is linear in x = 1/m,
// so a and b come from a linear least-squares fit of C against 1/m.
//
// Plain value types and pure functions: no I/O. Errors are UserError with one line saying what to do.
#include <cstdint>
#include <vector>

namespace gpupart {

// One step of a measurement: the process ran with `tpcs` TPCs and made progress at `rate` units per
// second (for gpupart measure: kernel launches plus graph replays per second).
struct CurvePoint {
    int tpcs = 0;
    double rate = 0;              // units per second; C = 1/rate
    double seconds = 0;           // how long the rate was measured (0: not recorded)
    std::uint64_t launches = 0;   // how many units were counted in that time (0: not recorded)

    double time_per_unit() const { return 1.0 / rate; }
    // A point from a counter: `launches` counted over `seconds` (rate = launches / seconds).
    static CurvePoint from_count(int tpcs, std::uint64_t launches, double seconds);
    bool operator==(const CurvePoint&) const = default;
};

// C(m) = a/m + b, in seconds per unit with m in TPCs.
struct ExecutionModel {
    double a = 0;  // seconds per unit x TPCs: the part that TPCs divide
    double b = 0;  // seconds per unit: the part that more TPCs do not shorten
    double time(int tpcs) const { return a / tpcs + b; }
    double rate(int tpcs) const { return 1.0 / time(tpcs); }
    // The same curve with every time multiplied by `factor` (Zahaf et al., RTNS 2021, Section 7.1's k_i).
    ExecutionModel scaled(double factor) const { return {a * factor, b * factor}; }
    bool operator==(const ExecutionModel&) const = default;
};

struct CurveFit {
    ExecutionModel model;
    // How well the model fits the points: R^2 of C (1 = every point on the curve) and the root mean
    // square of (C_fit - C) / C over the points (0.03 = the fit is off by 3% at a typical point).
    double r_squared = 0;
    double rms_relative_residual = 0;
    // The unconstrained fit had b < 0 (faster than linear, which the model cannot describe: noise or
    // a cache effect), so the fit was redone with b = 0.
    bool b_clamped = false;
    int fewest_tpcs = 0;  // the measured range, for callers that must not extrapolate far
    int most_tpcs = 0;
    std::size_t points = 0;
};

// Fits C(m) = a/m + b to `points` by least squares on relative residuals (each point weighted by
// 1/C^2): a rate measured over a fixed time has an error proportional to itself, so an unweighted fit
// in C would let the slowest point (fewest TPCs) decide the curve. Needs at least three distinct TPC
// counts (two unknowns and something left to judge the fit by), every rate finite and above zero, and a
// rate that rises with TPCs by more than the noise (otherwise the process is not limited by its TPCs,
// or it is saturated over the whole measured range: the model has nothing to plan with). Throws
// UserError saying which of these failed and what to measure instead.
CurveFit fit_curve(const std::vector<CurvePoint>& points);

}  // namespace gpupart
