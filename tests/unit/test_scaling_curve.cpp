// Fitting Zahaf et al.'s (RTNS 2021) C(m) = a/m + b (Section 3.3) to measured rates (planner/scaling_curve.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/user_error.hpp"
#include "planner/scaling_curve.hpp"
#include "../lib/thrown_message.hpp"

using gpupart::CurveFit;
using gpupart::CurvePoint;
using gpupart::ExecutionModel;
using gpupart::fit_curve;

namespace {

// The rates a process following C(m) = a/m + b shows at `counts`, each multiplied by (1 + noise) with
// noise drawn from N(0, sigma): a rate counted over a fixed time errs in proportion to itself.
std::vector<CurvePoint> measured(ExecutionModel model, const std::vector<int>& counts, double sigma, unsigned seed) {
    std::mt19937 random(seed);
    std::normal_distribution<double> noise(0.0, sigma);
    std::vector<CurvePoint> points;
    for (int m : counts) points.push_back(CurvePoint{m, model.rate(m) * (1.0 + (sigma > 0 ? noise(random) : 0.0)), 2.0, 0});
    return points;
}

const std::vector<int> kH100Steps = {4, 8, 12, 16, 20, 24, 28, 33, 38, 42, 46, 50, 54, 58, 62, 66};

std::string error_of(const std::vector<CurvePoint>& points) {
    return gpupart::test::thrown_message([&] { fit_curve(points); });
}

}  // namespace

TEST(ScalingCurve, ExactPointsGiveAAndBExactly) {
    const ExecutionModel truth{0.066, 0.0002};  // 1 ms per launch at 66 TPCs, 0.2 ms of it fixed
    const CurveFit fit = fit_curve(measured(truth, {4, 16, 33, 66}, 0.0, 1));
    EXPECT_NEAR(fit.model.a, truth.a, 1e-12);
    EXPECT_NEAR(fit.model.b, truth.b, 1e-12);
    EXPECT_NEAR(fit.r_squared, 1.0, 1e-12);
    EXPECT_NEAR(fit.rms_relative_residual, 0.0, 1e-12);
    EXPECT_FALSE(fit.b_clamped);
    EXPECT_EQ(fit.fewest_tpcs, 4);
    EXPECT_EQ(fit.most_tpcs, 66);
    EXPECT_EQ(fit.points, 4u);
}

TEST(ScalingCurve, NoisyComputeBoundCurveRecoversAAndB) {
    // Seed 002 Section 7.1's compute-intensive shape: b = 0.02 a (with a in SM units on 68 SMs; here
    // the same ratio in TPCs). 2% noise, 16 steps as gpupart measure would take on an H100.
    const ExecutionModel truth{0.066, 0.02 * 0.066};
    for (unsigned seed : {1u, 2u, 3u}) {
        const CurveFit fit = fit_curve(measured(truth, kH100Steps, 0.02, seed));
        EXPECT_NEAR(fit.model.a, truth.a, 0.03 * truth.a) << "seed " << seed;
        EXPECT_NEAR(fit.model.b, truth.b, 0.25 * truth.b) << "seed " << seed;  // b is the small part here
        EXPECT_GT(fit.r_squared, 0.99);
        EXPECT_GT(fit.rms_relative_residual, 0.005);  // the noise is seen, not hidden
        EXPECT_LT(fit.rms_relative_residual, 0.04);
    }
}

TEST(ScalingCurve, NoisyMemoryBoundCurveRecoversAAndB) {
    // Section 7.1's memory-intensive shape: b = 0.1 a; the fixed part dominates at full GPU.
    const ExecutionModel truth{0.01, 0.1 * 0.01};
    for (unsigned seed : {4u, 5u, 6u}) {
        const CurveFit fit = fit_curve(measured(truth, kH100Steps, 0.02, seed));
        EXPECT_NEAR(fit.model.a, truth.a, 0.05 * truth.a) << "seed " << seed;
        EXPECT_NEAR(fit.model.b, truth.b, 0.05 * truth.b) << "seed " << seed;
    }
}

TEST(ScalingCurve, FasterThanLinearIsRefitWithoutAFixedPart) {
    // C = a/m - c cannot be a/m + b with b >= 0; the fit goes through the origin and says so.
    std::vector<CurvePoint> points;
    for (int m : {2, 4, 8, 16}) points.push_back(CurvePoint{m, 1.0 / (1.0 / m - 0.01), 1.0, 0});
    const CurveFit fit = fit_curve(points);
    EXPECT_TRUE(fit.b_clamped);
    EXPECT_EQ(fit.model.b, 0.0);
    EXPECT_GT(fit.model.a, 0.0);
}

TEST(ScalingCurve, FewerThanThreeTpcCountsAreRefused) {
    const ExecutionModel truth{1.0, 0.1};
    EXPECT_NE(error_of(measured(truth, {8, 16}, 0.0, 1)).find("2 distinct TPC counts measured"), std::string::npos);
    EXPECT_NE(error_of(measured(truth, {8, 8, 8, 16}, 0.0, 1)).find("needs at least 3"), std::string::npos);
    EXPECT_NE(error_of({}).find("0 distinct TPC counts"), std::string::npos);
}

TEST(ScalingCurve, NonPositiveRatesNameTheirPoint) {
    std::vector<CurvePoint> points = measured({1.0, 0.1}, {4, 8, 16, 32}, 0.0, 1);
    points[1].rate = 0;
    EXPECT_NE(error_of(points).find("at 8 TPCs the rate is 0 per second"), std::string::npos);
    points[1].rate = -3;
    EXPECT_NE(error_of(points).find("at 8 TPCs the rate is -3"), std::string::npos);
    points[1].rate = std::nan("");
    EXPECT_NE(error_of(points).find("at 8 TPCs"), std::string::npos);
    points[1] = CurvePoint{0, 5.0, 1.0, 5};
    EXPECT_NE(error_of(points).find("has 0 TPCs"), std::string::npos);
}

TEST(ScalingCurve, FlatCurveIsRefusedAsNotLimitedByTpcs) {
    // An idle or CPU-bound process: the same rate, give or take the noise, at every count.
    std::vector<CurvePoint> points;
    std::mt19937 random(7);
    std::normal_distribution<double> noise(0.0, 0.02);
    for (int m : kH100Steps) points.push_back(CurvePoint{m, 500.0 * (1.0 + noise(random)), 2.0, 0});
    const std::string error = error_of(points);
    EXPECT_NE(error.find("does not rise with TPCs beyond the noise"), std::string::npos) << error;
    EXPECT_NE(error.find("measure down to fewer TPCs"), std::string::npos);
}

TEST(ScalingCurve, FallingCurveIsRefused) {
    std::vector<CurvePoint> points;
    for (int m : {8, 16, 32, 64}) points.push_back(CurvePoint{m, 1000.0 - m, 1.0, 0});
    EXPECT_NE(error_of(points).find("does not rise with TPCs"), std::string::npos);
}

TEST(ScalingCurve, ARealButSmallRiseIsAccepted) {
    // Saturated from 33 to 66 TPCs but still 10% faster at the top: a curve, not noise.
    const ExecutionModel truth{0.0066, 0.0009};
    const CurveFit fit = fit_curve(measured(truth, {33, 44, 55, 66}, 0.0, 1));
    EXPECT_NEAR(fit.model.a, truth.a, 1e-12);
}

TEST(ScalingCurve, PointFromCounter) {
    const CurvePoint p = CurvePoint::from_count(12, 3000, 2.0);
    EXPECT_EQ(p.tpcs, 12);
    EXPECT_DOUBLE_EQ(p.rate, 1500.0);
    EXPECT_DOUBLE_EQ(p.time_per_unit(), 1.0 / 1500.0);
    EXPECT_THROW(CurvePoint::from_count(12, 3000, 0.0), gpupart::UserError);
}
