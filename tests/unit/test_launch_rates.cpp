// Launch counters into launches per second (model/launch_rates.hpp), as the app and `gpupart top` show them.
#include <gtest/gtest.h>

#include "model/launch_rates.hpp"

using gpupart::LaunchRates;
using namespace std::chrono_literals;

namespace {
const LaunchRates::Clock::time_point t0{};
}

TEST(LaunchRates, NoRateUntilAWholeWindowHasPassed) {
    LaunchRates rates(500ms);
    EXPECT_FALSE(rates.update(7, 100, 1000, t0).has_value());
    EXPECT_FALSE(rates.update(7, 100, 1200, t0 + 100ms).has_value());
    const auto rate = rates.update(7, 100, 1500, t0 + 500ms);
    ASSERT_TRUE(rate.has_value());
    EXPECT_DOUBLE_EQ(*rate, 1000.0);  // 500 launches in 0.5 s
}

TEST(LaunchRates, ASampleInsideTheWindowKeepsTheLastRate) {
    LaunchRates rates(250ms);
    rates.update(7, 100, 0, t0);
    EXPECT_DOUBLE_EQ(*rates.update(7, 100, 400, t0 + 1s), 400.0);
    EXPECT_DOUBLE_EQ(*rates.update(7, 100, 401, t0 + 1s + 5ms), 400.0);  // a key press: not 200/s of noise
    EXPECT_DOUBLE_EQ(*rates.update(7, 100, 1400, t0 + 2s), 1000.0);     // measured from the window's start
}

TEST(LaunchRates, ProcessesAreKeptApartByStartTime) {
    LaunchRates rates(100ms);
    rates.update(7, 100, 0, t0);
    rates.update(7, 200, 5000, t0);  // pid 7 reused by another process
    EXPECT_DOUBLE_EQ(*rates.update(7, 100, 10, t0 + 1s), 10.0);
    EXPECT_DOUBLE_EQ(*rates.update(7, 200, 5020, t0 + 1s), 20.0);
}

TEST(LaunchRates, ACounterThatGoesBackStartsOver) {
    LaunchRates rates(100ms);
    rates.update(7, 100, 500, t0);
    EXPECT_FALSE(rates.update(7, 100, 10, t0 + 1s).has_value());
    EXPECT_DOUBLE_EQ(*rates.update(7, 100, 110, t0 + 2s), 100.0);
}

TEST(LaunchRates, ForgottenProcessesStartAfresh) {
    LaunchRates rates(100ms);
    rates.update(7, 100, 0, t0);
    rates.update(8, 100, 0, t0);
    rates.forget_except({{8, 100}});
    EXPECT_FALSE(rates.update(7, 100, 100, t0 + 1s).has_value());  // a first sample again
    EXPECT_DOUBLE_EQ(*rates.update(8, 100, 100, t0 + 1s), 100.0);
}
