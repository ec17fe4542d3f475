#include "planner/scaling_curve.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {
namespace {

// The least change over the measured range that counts as "the rate rises with TPCs", whatever the
// noise: 2%, below what a few seconds of launch counting can tell apart reliably.
constexpr double kMinGain = 0.02;
// ... and the change must also be at least this many times the fit's typical relative residual.
constexpr double kGainOverNoise = 2.0;

void check_points(const std::vector<CurvePoint>& points) {
    std::set<int> counts;
    for (const CurvePoint& p : points) {
        if (p.tpcs <= 0)
            throw UserError(fmt::format("a curve point has {} TPCs; every point needs at least 1 TPC", p.tpcs));
        if (!std::isfinite(p.rate) || p.rate <= 0)
            throw UserError(fmt::format(
                "at {} TPCs the rate is {} per second: the process made no progress there (idle, or waiting on "
                "the CPU or I/O); a curve needs a rate above zero at every TPC count, so measure while it is busy",
                p.tpcs, p.rate));
        counts.insert(p.tpcs);
    }
    if (counts.size() < 3)
        throw UserError(fmt::format("{} distinct TPC counts measured; fitting C(m) = a/m + b needs at least 3 (two "
                                    "unknowns and one more to judge the fit): measure more steps",
                                    counts.size()));
}

// Weighted least squares of y = a x + b with weights w (normal equations, closed form).
struct Sums {
    double w = 0, x = 0, xx = 0, y = 0, xy = 0;
};

}  // namespace

CurvePoint CurvePoint::from_count(int tpcs, std::uint64_t launches, double seconds) {
    if (!(seconds > 0))
        throw UserError(fmt::format("at {} TPCs: a rate needs a measuring time above zero (got {} s)", tpcs, seconds));
    return CurvePoint{tpcs, static_cast<double>(launches) / seconds, seconds, launches};
}

CurveFit fit_curve(const std::vector<CurvePoint>& points) {
    check_points(points);
    Sums s;
    for (const CurvePoint& p : points) {
        const double x = 1.0 / p.tpcs;
        const double y = p.time_per_unit();
        const double w = 1.0 / (y * y);  // relative residuals: see the header
        s.w += w;
        s.x += w * x;
        s.xx += w * x * x;
        s.y += w * y;
        s.xy += w * x * y;
    }
    CurveFit fit;
    const double det = s.w * s.xx - s.x * s.x;  // > 0: at least two distinct x (checked above)
    fit.model.a = (s.w * s.xy - s.x * s.y) / det;
    fit.model.b = (s.xx * s.y - s.x * s.xy) / det;
    if (fit.model.b < 0) {
        // The model's b is time that TPCs cannot remove, never negative (Zahaf et al., RTNS 2021, Section 7.1 sets it to a
        // share of a). Refit through the origin: C = a/m.
        fit.model.b = 0;
        fit.model.a = s.xy / s.xx;
        fit.b_clamped = true;
    }

    double mean = 0;
    for (const CurvePoint& p : points) mean += p.time_per_unit();
    mean /= static_cast<double>(points.size());
    double ss_res = 0, ss_tot = 0, rel = 0;
    for (const CurvePoint& p : points) {
        const double c = p.time_per_unit();
        const double r = fit.model.time(p.tpcs) - c;
        ss_res += r * r;
        ss_tot += (c - mean) * (c - mean);
        rel += (r / c) * (r / c);
    }
    fit.r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 0.0;
    fit.rms_relative_residual = std::sqrt(rel / static_cast<double>(points.size()));
    const auto [lo, hi] = std::minmax_element(points.begin(), points.end(),
                                              [](const CurvePoint& l, const CurvePoint& r) { return l.tpcs < r.tpcs; });
    fit.fewest_tpcs = lo->tpcs;
    fit.most_tpcs = hi->tpcs;
    fit.points = points.size();

    // Definition 1 of Zahaf et al., RTNS 2021 needs a curve whose time falls with SMs at least somewhere; one that
    // does not (or not beyond the noise) leaves a and b meaningless for sizing a partition.
    const double gain = fit.model.a > 0 ? fit.model.time(fit.fewest_tpcs) / fit.model.time(fit.most_tpcs) - 1.0 : 0.0;
    const double needed = std::max(kMinGain, kGainOverNoise * fit.rms_relative_residual);
    if (fit.model.a <= 0 || gain < needed)
        throw UserError(fmt::format(
            "the rate does not rise with TPCs beyond the noise (from {:.4g}/s at {} TPCs to {:.4g}/s at {}: {:+.1f}%, "
            "noise {:.1f}%): the process is not limited by its TPCs (idle, CPU-bound, or its rate is not a "
            "throughput) or it is saturated over this whole range; measure down to fewer TPCs, or while it is busy",
            lo->rate, lo->tpcs, hi->rate, hi->tpcs, 100.0 * (hi->rate / lo->rate - 1.0),
            100.0 * fit.rms_relative_residual));
    return fit;
}

}  // namespace gpupart
