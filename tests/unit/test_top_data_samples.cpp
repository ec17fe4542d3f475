// What a `gpupart top` frame keeps across samples (owner letters, launch rates) and reads from /proc.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <unistd.h>

#include "top/top_data.hpp"
#include "top_test_data.hpp"

using namespace gpupart;
using namespace gpupart::top;
using namespace gpupart::top::test;

// A process keeps its letter and colour for its whole life; an exit frees a letter and is
// reported, and never re-letters the others (B stayed B when A exited).
TEST(OwnerLetters, AnExitNeverMovesAnotherProcesssLetter) {
    OwnerLetters letters;
    EXPECT_TRUE(letters.update({{300, 1, "c"}, {100, 1, "a"}, {200, 1, "b"}}).empty());
    EXPECT_EQ(letters.mark(100, 1).letter, 'A');
    EXPECT_EQ(letters.mark(200, 1).letter, 'B');
    EXPECT_EQ(letters.mark(300, 1).letter, 'C');
    const int b_colour = letters.mark(200, 1).index;

    const auto exited = letters.update({{200, 1, "b"}, {300, 1, "c"}});
    ASSERT_EQ(exited.size(), 1u);
    EXPECT_EQ(exited[0].pid, 100);
    EXPECT_EQ(exited[0].letter, 'A');
    EXPECT_EQ(exited[0].command, "a");
    EXPECT_EQ(letters.mark(200, 1).letter, 'B');
    EXPECT_EQ(letters.mark(200, 1).index, b_colour);
    EXPECT_EQ(letters.mark(300, 1).letter, 'C');

    // A new process takes the lowest free letter; a pid reused by a new process (another start time) is new.
    EXPECT_TRUE(letters.update({{200, 1, "b"}, {300, 1, "c"}, {50, 7, "d"}}).empty());
    EXPECT_EQ(letters.mark(50, 7).letter, 'A');
    const auto reused = letters.update({{200, 2, "b2"}, {300, 1, "c"}, {50, 7, "d"}});
    ASSERT_EQ(reused.size(), 1u);
    EXPECT_EQ(reused[0].pid, 200);
    EXPECT_EQ(letters.mark(200, 2).letter, 'B');
    EXPECT_EQ(letters.mark(200, 1).letter, '?');
}

// Frames of a hand-made SystemState through make_top_data, one refresh a second, with the view's state
// (rates, letters) kept across them as a session keeps it.
struct Frames {
    SystemState state;
    TopSource source{"builtin:h200", true, "", "", 1};
    LaunchRates rates{kTopRateWindow};
    OwnerLetters letters;
    std::chrono::steady_clock::time_point now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
    Frames() { state.gpu = h200(); }
    TopData next() {
        now += std::chrono::seconds(1);
        return make_top_data(state, source, "/run/gpupart", rates, letters, now);
    }
};

TEST(OwnerLetters, TheViewKeepsLettersAcrossSamplesAndNamesTheExit) {
    Frames frames;
    const auto process = [](int pid) {
        ProcessState p;
        p.pid = pid;
        p.start_time = 1;
        p.command = "worker " + std::to_string(pid);
        return p;
    };
    frames.state.processes = {process(10), process(20), process(30)};
    TopData data = frames.next();
    ASSERT_EQ(data.processes.size(), 3u);
    EXPECT_EQ(data.processes[1].letter, 'B');
    frames.state.processes = {process(20), process(30)};
    data = frames.next();
    ASSERT_EQ(data.processes.size(), 2u);
    EXPECT_EQ(data.processes[0].pid, 20);
    EXPECT_EQ(data.processes[0].letter, 'B');
    EXPECT_EQ(data.processes[1].letter, 'C');
    ASSERT_EQ(data.exited.size(), 1u);
    EXPECT_EQ(data.exited[0].letter, 'A');
    EXPECT_EQ(data.exited[0].command, "worker 10");
}

// Launch rates count graph replays; a process that only replays graphs is not shown idle.
TEST(TopData, TheLaunchRateCountsGraphReplays) {
    Frames frames;
    ProcessState p;
    p.pid = 42;
    p.start_time = 1;
    p.graph_launches = 100;
    frames.state.processes = {p};
    frames.next();
    frames.state.processes[0].graph_launches = 500;
    const TopData data = frames.next();
    ASSERT_EQ(data.processes.size(), 1u);
    ASSERT_TRUE(data.processes[0].launches_per_second.has_value());
    EXPECT_DOUBLE_EQ(*data.processes[0].launches_per_second, 400.0);
}

TEST(TopData, UsageComesFromProcOfRealProcesses) {
    TopData data = frame_data(demo_processes());
    data.processes[0].pid = ::getpid();  // this test, a real process (not simulated)
    data.processes[0].start_time = 0;    // any start time
    data.processes[0].simulated = false;
    ProcessUsageSampler usage;
    add_usage(data, usage, std::chrono::steady_clock::now());
    ASSERT_TRUE(data.processes[0].rss_bytes.has_value());
    EXPECT_GT(*data.processes[0].rss_bytes, 1ull << 20);
    EXPECT_FALSE(data.processes[1].rss_bytes.has_value());  // a demo worker: not sampled
}
