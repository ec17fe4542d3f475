#include "planner/classification.hpp"

#include <cmath>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {
namespace {

void check_inputs(int total_tpcs, std::optional<double> memory_throughput) {
    if (total_tpcs < 2)
        throw UserError(fmt::format("classifying a curve needs the GPU's TPC count (at least 2), got {}", total_tpcs));
    if (memory_throughput && !(*memory_throughput >= 0 && *memory_throughput <= 1))
        throw UserError(fmt::format("the memory-throughput figure must be a fraction from 0 to 1, got {}",
                                    *memory_throughput));
}

// The rate at N/2 and at N from the measured points, when they cover both (see the header).
std::optional<double> measured_speedup(const std::vector<CurvePoint>& points, int total_tpcs) {
    std::map<int, std::pair<double, int>> sums;  // tpcs -> (sum of rates, count)
    for (const CurvePoint& p : points) {
        auto& [sum, count] = sums[p.tpcs];
        sum += p.rate;
        ++count;
    }
    auto mean = [](const std::pair<double, int>& s) { return s.first / s.second; };
    const auto top = sums.find(total_tpcs);
    const double half = total_tpcs / 2.0;
    auto above = sums.lower_bound(static_cast<int>(std::ceil(half)));  // first count >= N/2
    if (top == sums.end() || above == sums.end()) return std::nullopt;
    double rate_half = 0;
    if (above->first == half) {
        rate_half = mean(above->second);
    } else {
        if (above == sums.begin()) return std::nullopt;  // nothing measured below N/2
        const auto below = std::prev(above);
        const double t = (half - below->first) / (above->first - below->first);
        rate_half = mean(below->second) + t * (mean(above->second) - mean(below->second));
    }
    return mean(top->second) / rate_half;
}

Classification decide(Classification c, int total_tpcs, std::optional<double> memory_throughput,
                      const ClassifyOptions& options, std::string_view source) {
    const double s = c.half_to_full_speedup;
    const double threshold = options.memory_below_speedup;
    c.intensity = s < threshold ? Intensity::memory : Intensity::compute;
    std::string why = fmt::format("from {} to {} TPCs it runs {:.2f}x as fast ({}; 2x: compute-bound, 1x: "
                                  "saturated at half the GPU, Zahaf et al., RTNS 2021, Definition 1)",
                                  total_tpcs / 2, total_tpcs, s, source);
    if (memory_throughput && std::abs(s - threshold) <= options.ambiguity) {
        c.decided_by_memory_throughput = true;
        c.intensity = *memory_throughput >= options.busy_memory ? Intensity::memory : Intensity::compute;
        why += fmt::format("; that is near the {:.2f}x line, so the memory throughput ({:.0f}%) decided", threshold,
                           100.0 * *memory_throughput);
    } else if (memory_throughput) {
        why += fmt::format("; memory throughput {:.0f}%", 100.0 * *memory_throughput);
    }
    c.reason = fmt::format("{}-intensive: {}", to_string(c.intensity), why);
    return c;
}

}  // namespace

std::string_view to_string(Intensity intensity) {
    return intensity == Intensity::memory ? "memory" : "compute";
}

std::optional<Intensity> intensity_from_string(std::string_view text) {
    if (text == "memory") return Intensity::memory;
    if (text == "compute") return Intensity::compute;
    return std::nullopt;
}

Classification classify(const CurveFit& fit, int total_tpcs, std::optional<double> memory_throughput,
                        const ClassifyOptions& options) {
    check_inputs(total_tpcs, memory_throughput);
    Classification c;
    const double half = total_tpcs / 2.0;  // C(N/2) with a real-valued m: the model is defined there
    const double full = fit.model.time(total_tpcs);
    c.half_to_full_speedup = (fit.model.a / half + fit.model.b) / full;
    c.serial_share = fit.model.b / full;
    return decide(c, total_tpcs, memory_throughput, options,
                  fmt::format("on the fit; {:.0f}% of its time at full GPU does not shrink with TPCs",
                              100.0 * c.serial_share));
}

Classification classify_measured(const std::vector<CurvePoint>& points, const CurveFit& fit, int total_tpcs,
                                 std::optional<double> memory_throughput, const ClassifyOptions& options) {
    check_inputs(total_tpcs, memory_throughput);
    const auto speedup = measured_speedup(points, total_tpcs);
    if (!speedup) {
        Classification c = classify(fit, total_tpcs, memory_throughput, options);
        c.extrapolated = fit.fewest_tpcs > total_tpcs / 2.0 || fit.most_tpcs < total_tpcs;
        if (c.extrapolated)
            c.reason += fmt::format("; extrapolated: measured from {} to {} TPCs only", fit.fewest_tpcs, fit.most_tpcs);
        return c;
    }
    Classification c;
    c.half_to_full_speedup = *speedup;
    c.serial_share = fit.model.b / fit.model.time(total_tpcs);
    c.measured = true;
    return decide(c, total_tpcs, memory_throughput, options, "measured");
}

}  // namespace gpupart
