#include <gtest/gtest.h>

#include "model/user_error.hpp"
#include "planner/measure_steps.hpp"

using namespace gpupart;

TEST(MeasureSteps, EvenlyInLogMFromTheMostToTheFloor) {
    // Six distinct counts, descending, from all it may use to the floor.
    const auto counts = measure_tpc_counts(66, 2, 6);
    ASSERT_EQ(counts.size(), 6u);
    EXPECT_EQ(counts.front(), 66);
    EXPECT_EQ(counts.back(), 2);
    for (std::size_t i = 1; i < counts.size(); ++i) EXPECT_LT(counts[i], counts[i - 1]);
}

TEST(MeasureSteps, KnownSpacing) {
    EXPECT_EQ(measure_tpc_counts(60, 4, 3), (std::vector<int>{60, 15, 4}));  // 60 x 0.258^i: 15.5 -> 15
    // 66 x 0.497^i: 66, 33, 16, 8, 4, 2 (half the GPU is a count of its own)
    EXPECT_EQ(measure_tpc_counts(66, 2, 6), (std::vector<int>{66, 33, 16, 8, 4, 2}));
    // 7 steps: 66 x 0.558^i = 66, 37, 21, 11, 6, 4, 2; the count nearest 33 (37) becomes 33
    EXPECT_EQ(measure_tpc_counts(66, 2, 7), (std::vector<int>{66, 33, 21, 11, 6, 4, 2}));
}

TEST(MeasureSteps, FewerCountsThanStepsTakesEveryCount) {
    EXPECT_EQ(measure_tpc_counts(5, 2, 6), (std::vector<int>{5, 4, 3, 2}));
}

TEST(MeasureSteps, RefusesWhatCannotBeFitted) {
    EXPECT_THROW(measure_tpc_counts(3, 2, 6), UserError);   // two counts
    EXPECT_THROW(measure_tpc_counts(1, 2, 6), UserError);   // below the floor
    EXPECT_THROW(measure_tpc_counts(66, 0, 6), UserError);  // no TPC
    EXPECT_THROW(measure_tpc_counts(66, 2, 2), UserError);  // two steps
}
