// InterferenceWatch (backend/controller/interference.hpp): a partitioned process slowed while a neighbour
// speeds up is named; a change of its own TPCs, noise, or a fall with no neighbour rising is not.
#include <gtest/gtest.h>

#include "controller/interference.hpp"

using namespace gpupart;
using Sample = InterferenceWatch::Sample;

namespace {

struct Watched {
    InterferenceWatch watch;
    InterferenceWatch::Clock::time_point now = InterferenceWatch::Clock::time_point{} + std::chrono::hours(1);
    std::vector<Finding> last;
    // `seconds` of samples at 4 Hz from `make(t)`
    template <typename Make>
    void feed(double seconds, Make make) {
        for (int i = 0; i < static_cast<int>(seconds * 4); ++i) {
            now += std::chrono::milliseconds(250);
            last = watch.update(make(), now);
        }
    }
};

}  // namespace

TEST(Interference, ASlowedPartitionBesideANeighbourThatRoseIsNamed) {
    Watched run;
    run.feed(10, [] { return std::vector<Sample>{{100, 1, true, 2, 1000.0}, {200, 1, true, 2, 0.0}}; });
    EXPECT_TRUE(run.last.empty());
    run.feed(2.5, [] { return std::vector<Sample>{{100, 1, true, 2, 600.0}, {200, 1, true, 2, 400.0}}; });
    ASSERT_EQ(run.last.size(), 1u);
    EXPECT_EQ(run.last[0].id, "interference");
    EXPECT_EQ(run.last[0].severity, Severity::warning);
    EXPECT_NE(run.last[0].message.find("process 100's launch rate fell"), std::string::npos) << run.last[0].message;
    EXPECT_NE(run.last[0].message.find("process 200's rose ("), std::string::npos) << run.last[0].message;
    EXPECT_NE(run.last[0].message.find("to 400/s), neither's TPCs changed"), std::string::npos) << run.last[0].message;
}

TEST(Interference, ItsOwnTpcsChangingOrNoNeighbourRisingIsNotInterference) {
    Watched own;
    own.feed(10, [] { return std::vector<Sample>{{100, 1, true, 2, 1000.0}, {200, 1, true, 5, 0.0}}; });
    // gpupart set gave it fewer TPCs (generation 3): the fall is the change's, not a neighbour's.
    own.feed(2.5, [] { return std::vector<Sample>{{100, 1, true, 3, 500.0}, {200, 1, true, 5, 400.0}}; });
    EXPECT_TRUE(own.last.empty());

    Watched alone;
    alone.feed(10, [] { return std::vector<Sample>{{100, 1, true, 2, 1000.0}, {200, 1, true, 2, 300.0}}; });
    alone.feed(2.5, [] { return std::vector<Sample>{{100, 1, true, 2, 500.0}, {200, 1, true, 2, 310.0}}; });
    EXPECT_TRUE(alone.last.empty());  // the other stayed where it was

    Watched noise;
    noise.feed(10, [] { return std::vector<Sample>{{100, 1, true, 2, 1000.0}, {200, 1, true, 2, 300.0}}; });
    noise.feed(2.5, [] { return std::vector<Sample>{{100, 1, true, 2, 900.0}, {200, 1, true, 2, 450.0}}; });
    EXPECT_TRUE(noise.last.empty());  // a 10% dip is not a fall

    Watched unpartitioned;  // a process without a partition may run anywhere: not what a partition promises
    unpartitioned.feed(10, [] { return std::vector<Sample>{{100, 1, false, 2, 1000.0}, {200, 1, true, 2, 0.0}}; });
    unpartitioned.feed(2.5, [] { return std::vector<Sample>{{100, 1, false, 2, 500.0}, {200, 1, true, 2, 400.0}}; });
    EXPECT_TRUE(unpartitioned.last.empty());
}

TEST(Interference, AProcessThatExitsIsForgotten) {
    Watched run;
    run.feed(10, [] { return std::vector<Sample>{{100, 1, true, 2, 1000.0}, {200, 1, true, 2, 0.0}}; });
    run.feed(1, [] { return std::vector<Sample>{{200, 1, true, 2, 400.0}}; });
    // pid 100 came back as another process (another start time): it has no history to fall from.
    run.feed(2.5, [] { return std::vector<Sample>{{100, 2, true, 2, 300.0}, {200, 1, true, 2, 400.0}}; });
    EXPECT_TRUE(run.last.empty());
}

// Seen on an H100 (tests/device/meters_device.sh): the usual neighbour is a process that starts; its rate
// had no "before". The victim's fell from 3150 to 1615/s when a memory-heavy neighbour started beside it.
TEST(Interference, ANeighbourThatStartsIsTheRiser) {
    Watched run;
    run.feed(12, [] { return std::vector<Sample>{{465, 1, true, 2, 3150.0}}; });
    EXPECT_TRUE(run.last.empty());
    run.feed(0.5, [] { return std::vector<Sample>{{465, 1, true, 2, 2019.0}, {512, 1, true, 2, std::nullopt}}; });
    run.feed(2.5, [] { return std::vector<Sample>{{465, 1, true, 2, 1615.0}, {512, 1, true, 2, 506.0}}; });
    ASSERT_EQ(run.last.size(), 1u);
    EXPECT_NE(run.last[0].message.find("process 465's launch rate fell"), std::string::npos) << run.last[0].message;
    EXPECT_NE(run.last[0].message.find("process 512's started (0 to 506/s)"), std::string::npos) << run.last[0].message;
}

// gpupart top refreshes once a second: two recent points are enough.
TEST(Interference, AtOneRefreshASecond) {
    InterferenceWatch watch;
    auto now = InterferenceWatch::Clock::time_point{} + std::chrono::hours(1);
    std::vector<Finding> last;
    for (int i = 0; i < 14; ++i) last = watch.update({{465, 1, true, 2, 3150.0}}, now += std::chrono::seconds(1));
    last = watch.update({{465, 1, true, 2, 2064.0}, {509, 1, true, 2, std::nullopt}}, now += std::chrono::seconds(1));
    EXPECT_TRUE(last.empty());
    last = watch.update({{465, 1, true, 2, 1658.0}, {509, 1, true, 2, 369.0}}, now += std::chrono::seconds(1));
    last = watch.update({{465, 1, true, 2, 1645.0}, {509, 1, true, 2, 520.0}}, now += std::chrono::seconds(1));
    ASSERT_EQ(last.size(), 1u);
    EXPECT_EQ(last[0].id, "interference");
}
