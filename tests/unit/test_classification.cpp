// Compute- or memory-intensive from a curve's shape (Zahaf et al., RTNS 2021, Section 3.1, Definition 1; planner/classification.hpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "model/user_error.hpp"
#include "planner/classification.hpp"

using gpupart::classify;
using gpupart::Classification;
using gpupart::CurveFit;
using gpupart::CurvePoint;
using gpupart::fit_curve;
using gpupart::Intensity;

namespace {

CurveFit fit_of(double a, double b, int fewest = 1, int most = 68) {
    CurveFit fit;
    fit.model = {a, b};
    fit.fewest_tpcs = fewest;
    fit.most_tpcs = most;
    return fit;
}

}  // namespace

// Seed 002 Section 7.1 generates compute-intensive tasks with b = 0.02 a and memory-intensive ones with
// b = 0.1 a, on the RTX 2080 Ti's 68 SMs. From 34 to 68 they speed up by (2/68 + r)/(1/68 + r):
// 1.4237 for r = 0.02 and 1.1282 for r = 0.1, either side of the 1.25 line.
TEST(Classification, SeedSection71ComputeTask) {
    const Classification c = classify(fit_of(100.0, 2.0), 68);
    EXPECT_EQ(c.intensity, Intensity::compute);
    EXPECT_NEAR(c.half_to_full_speedup, 1.4237, 1e-4);
    EXPECT_NEAR(c.serial_share, 2.0 - c.half_to_full_speedup, 1e-12);  // the two criteria are one
    EXPECT_FALSE(c.measured);
    EXPECT_EQ(c.reason.rfind("compute-intensive: from 34 to 68 TPCs it runs 1.42x as fast (on the fit", 0), 0u)
        << c.reason;
}

TEST(Classification, SeedSection71MemoryTask) {
    const Classification c = classify(fit_of(100.0, 10.0), 68);
    EXPECT_EQ(c.intensity, Intensity::memory);
    EXPECT_NEAR(c.half_to_full_speedup, 1.1282, 1e-4);
    EXPECT_NE(c.reason.find("memory-intensive"), std::string::npos);
}

// Seed 002 Figure 3: memory-intensive kernels (VADD, TRNS) stop speeding up at about 40 of 68 SMs, the
// compute-intensive ones (HS, PF) keep scaling linearly. Curves of those shapes, measured every 4 SMs,
// fall on the seed's side of Definition 1 when judged by what was measured. The knee is what a/m + b
// cannot follow: judged on the fit, the saturating curve would pass for compute-bound (S = 1.60).
TEST(Classification, SeedFigure3Shapes) {
    std::vector<CurvePoint> saturating, linear;
    for (int m = 4; m <= 68; m += 4) {
        saturating.push_back(CurvePoint{m, static_cast<double>(std::min(m, 40)), 1.0, 0});  // rate flat from 40 SMs
        linear.push_back(CurvePoint{m, static_cast<double>(m), 1.0, 0});
    }
    const Classification memory = gpupart::classify_measured(saturating, fit_curve(saturating), 68);
    EXPECT_EQ(memory.intensity, Intensity::memory);
    EXPECT_TRUE(memory.measured);
    EXPECT_NEAR(memory.half_to_full_speedup, 40.0 / 34.0, 1e-12);  // 34 SMs measured (interpolated 32..36)
    EXPECT_EQ(classify(fit_curve(saturating), 68).intensity, Intensity::compute);  // the fit alone misleads
    EXPECT_NEAR(classify(fit_curve(saturating), 68).half_to_full_speedup, 1.599, 1e-3);

    const Classification compute = gpupart::classify_measured(linear, fit_curve(linear), 68);
    EXPECT_EQ(compute.intensity, Intensity::compute);
    EXPECT_NEAR(compute.half_to_full_speedup, 2.0, 1e-12);
}

TEST(Classification, MeasuredHalfIsInterpolatedAndRepeatsAveraged) {
    // N = 66: N/2 = 33 lies between 30 and 36; 66 was measured twice.
    const std::vector<CurvePoint> points = {{10, 100, 1, 0}, {30, 300, 1, 0}, {36, 330, 1, 0},
                                            {66, 390, 1, 0}, {66, 410, 1, 0}};
    const Classification c = gpupart::classify_measured(points, fit_curve(points), 66);
    EXPECT_TRUE(c.measured);
    EXPECT_NEAR(c.half_to_full_speedup, 400.0 / 315.0, 1e-12);
    EXPECT_EQ(c.intensity, Intensity::compute);  // 1.27: just above the line
}

TEST(Classification, MemoryThroughputDecidesOnlyNearTheLine) {
    // S = 2 - b/C(N): b/C(N) = 0.76 gives S = 1.24, inside the band around 1.25.
    const CurveFit near = fit_of(0.24 * 68, 0.76);
    const Classification busy = classify(near, 68, 0.8);
    EXPECT_EQ(busy.intensity, Intensity::memory);
    EXPECT_TRUE(busy.decided_by_memory_throughput);
    const Classification idle = classify(near, 68, 0.1);
    EXPECT_EQ(idle.intensity, Intensity::compute);
    EXPECT_TRUE(idle.decided_by_memory_throughput);
    EXPECT_NE(idle.reason.find("the memory throughput (10%) decided"), std::string::npos) << idle.reason;
    EXPECT_EQ(classify(near, 68).intensity, Intensity::memory);  // without a figure the curve decides

    // Far from the line the curve decides, whatever the figure says.
    const Classification clear = classify(fit_of(100.0, 2.0), 68, 0.95);
    EXPECT_EQ(clear.intensity, Intensity::compute);
    EXPECT_FALSE(clear.decided_by_memory_throughput);
}

TEST(Classification, FitDecidesWhenTheMeasurementMissesHalfOrFull) {
    const gpupart::ExecutionModel model{1.0, 0.01};
    std::vector<CurvePoint> high, low, both;
    for (int m : {40, 50, 66}) high.push_back(CurvePoint{m, model.rate(m), 1, 0});  // nothing at or below 33
    for (int m : {8, 16, 40}) low.push_back(CurvePoint{m, model.rate(m), 1, 0});    // nothing at 66
    for (int m : {8, 33, 66}) both.push_back(CurvePoint{m, model.rate(m), 1, 0});
    const Classification from_high = gpupart::classify_measured(high, fit_curve(high), 66);
    EXPECT_FALSE(from_high.measured);
    EXPECT_TRUE(from_high.extrapolated);
    EXPECT_NE(from_high.reason.find("extrapolated: measured from 40 to 66 TPCs only"), std::string::npos);
    EXPECT_TRUE(gpupart::classify_measured(low, fit_curve(low), 66).extrapolated);
    const Classification from_both = gpupart::classify_measured(both, fit_curve(both), 66);
    EXPECT_TRUE(from_both.measured);
    EXPECT_FALSE(from_both.extrapolated);
    // On points that follow the model exactly, measured and fitted S agree.
    EXPECT_NEAR(from_both.half_to_full_speedup, classify(fit_curve(both), 66).half_to_full_speedup, 1e-9);
}

TEST(Classification, BadInputsAreRefused) {
    EXPECT_THROW(classify(fit_of(1.0, 0.1), 1), gpupart::UserError);
    EXPECT_THROW(classify(fit_of(1.0, 0.1), 66, 1.5), gpupart::UserError);
    EXPECT_THROW(classify(fit_of(1.0, 0.1), 66, -0.1), gpupart::UserError);
}

TEST(Classification, NamesRoundTrip) {
    EXPECT_EQ(gpupart::intensity_from_string(gpupart::to_string(Intensity::memory)), Intensity::memory);
    EXPECT_EQ(gpupart::intensity_from_string(gpupart::to_string(Intensity::compute)), Intensity::compute);
    EXPECT_FALSE(gpupart::intensity_from_string("io").has_value());
}
