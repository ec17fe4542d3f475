// ProcessUsageSampler (backend/platform/process_usage.hpp) on real processes: a busy child shows some of a
// core (at most one), a sleeping one about none, RSS is what it touched, and a process gone or another start time gives
// nothing.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "platform/process_start_time.h"
#include "platform/process_usage.hpp"

using namespace gpupart;

namespace {

pid_t child(bool busy) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        static volatile char memory[64 << 20];
        for (std::size_t i = 0; i < sizeof memory; i += 4096) memory[i] = 1;  // 64 MiB resident
        if (busy)
            for (;;) {
            }
        for (;;) ::pause();
    }
    return pid;
}

void end(pid_t pid) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

}  // namespace

TEST(ProcessUsage, ABusyProcessUsesAboutOneCoreAndASleepingOneNone) {
    const pid_t busy = child(true);
    const pid_t idle = child(false);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both have touched their memory
    const std::uint64_t busy_start = gpupart_process_start_time(busy);
    const std::uint64_t idle_start = gpupart_process_start_time(idle);
    ProcessUsageSampler sampler;
    const auto t0 = ProcessUsageSampler::Clock::now();
    EXPECT_FALSE(sampler.sample(busy, busy_start, t0).cpu_percent.has_value());  // one sample: no rate yet
    sampler.sample(idle, idle_start, t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    const auto t1 = ProcessUsageSampler::Clock::now();
    const ProcessUsage b = sampler.sample(busy, busy_start, t1);
    const ProcessUsage i = sampler.sample(idle, idle_start, t1);
    ASSERT_TRUE(b.cpu_percent.has_value());
    ASSERT_TRUE(i.cpu_percent.has_value());
    // Not a timing test: how much of a core the busy child got depends on the machine's load (CI builds beside
    // it); it got some, at most one core (it has one thread), and more than the sleeping one.
    EXPECT_GT(*b.cpu_percent, 0.5);
    EXPECT_LT(*b.cpu_percent, 101.0 * 1.05);
    EXPECT_LT(*i.cpu_percent, 5.0);
    EXPECT_GT(*b.cpu_percent, *i.cpu_percent);
    ASSERT_TRUE(i.rss_bytes.has_value());
    EXPECT_GT(*i.rss_bytes, 60ull << 20);
    // Another start time is another process: nothing.
    EXPECT_FALSE(sampler.sample(idle, idle_start + 1, t1).rss_bytes.has_value());
    end(busy);
    end(idle);
    EXPECT_FALSE(sampler.sample(busy, busy_start, t1).rss_bytes.has_value());  // gone
}

TEST(ProcessUsage, ACommandNameWithSpacesAndParenthesesDoesNotShiftTheFields) {
    const auto fields = stat_fields_after_comm("1234 (evil ) 1 2 (x) R 1 1234 1234 0 -1 4194560 100 0 0 0 55 66 0 0 20 0 1 0 777 1000 10\n");
    ASSERT_GE(fields.size(), 20u);
    EXPECT_EQ(fields[0], "R");
    EXPECT_EQ(fields[11], "55");
    EXPECT_EQ(fields[12], "66");
    EXPECT_EQ(fields[19], "777");
    EXPECT_TRUE(stat_fields_after_comm("no parenthesis").empty());
}

// A view that samples again a few milliseconds later (a key press refreshes gpupart top) keeps the last CPU%
// rather than dividing one clock tick by those milliseconds; past the interval it measures again.
TEST(ProcessUsage, ASampleTooSoonKeepsTheLastFigure) {
    const pid_t busy = child(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::uint64_t start = gpupart_process_start_time(busy);
    ProcessUsageSampler sampler("/proc", std::chrono::milliseconds(250));
    const auto t0 = ProcessUsageSampler::Clock::now();
    sampler.sample(busy, start, t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto t1 = ProcessUsageSampler::Clock::now();
    const ProcessUsage measured = sampler.sample(busy, start, t1);
    ASSERT_TRUE(measured.cpu_percent.has_value());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const ProcessUsage soon = sampler.sample(busy, start, t1 + std::chrono::milliseconds(5));
    ASSERT_TRUE(soon.cpu_percent.has_value());
    EXPECT_EQ(*soon.cpu_percent, *measured.cpu_percent);
    EXPECT_TRUE(soon.rss_bytes.has_value());  // RSS is read every time
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const ProcessUsage later = sampler.sample(busy, start, ProcessUsageSampler::Clock::now());
    ASSERT_TRUE(later.cpu_percent.has_value());
    EXPECT_GT(*later.cpu_percent, 0.5);  // measured again over the last 300 ms: the child spins
    end(busy);
}
