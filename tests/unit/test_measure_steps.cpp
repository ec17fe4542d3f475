#include <gtest/gtest.h>

#include "model/user_error.hpp"
#include "planner/measure_steps.hpp"

using namespace gpupart;

TEST(MeasureSteps, EvenlyInOneOverMFromTheMostToTheFloor) {
    // Six distinct counts, descending, from all it may use to the floor.
    const auto counts = measure_tpc_counts(66, 2, 6);
    ASSERT_EQ(counts.size(), 6u);
    EXPECT_EQ(counts.front(), 66);
    EXPECT_EQ(counts.back(), 2);
    for (std::size_t i = 1; i < counts.size(); ++i) EXPECT_LT(counts[i], counts[i - 1]);
}

TEST(MeasureSteps, KnownSpacing) {
    EXPECT_EQ(measure_tpc_counts(60, 4, 3), (std::vector<int>{60, 8, 4}));   // 1/m: 1/60, 2/15 (7.5 -> 8), 1/4
    EXPECT_EQ(measure_tpc_counts(66, 2, 6), (std::vector<int>{66, 9, 5, 4, 3, 2}));
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
