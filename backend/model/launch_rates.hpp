#pragma once
// Launches per second from the shim's launch counters, per process identity (pid, start time), for the
// app's table and charts and for `gpupart top`. A rate is measured over at least `window`, so a sample
// taken right after another (a key press, a drop) keeps the last rate instead of showing the noise of a
// few launches in a few milliseconds.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace gpupart {

class LaunchRates {
public:
    using Clock = std::chrono::steady_clock;
    explicit LaunchRates(std::chrono::milliseconds window) : window_(window) {}

    // The rate of `launches` over this process's last full window, as of `now`; empty until one window
    // has passed since its first sample, and again after its counter went backwards.
    std::optional<double> update(int pid, std::uint64_t start_time, std::uint64_t launches, Clock::time_point now);
    // Drops every process not in `alive` (exited ones), so a reused pid starts afresh.
    void forget_except(const std::vector<std::pair<int, std::uint64_t>>& alive);
    void clear() { windows_.clear(); }
    // The rates of this process's last two full windows (before, after); nullopt until two have passed.
    struct Change {
        double before = 0;
        double after = 0;
    };
    std::optional<Change> last_change(int pid, std::uint64_t start_time) const;
    std::chrono::milliseconds window() const { return window_; }

private:
    struct Window {
        std::uint64_t launches = 0;  // the counter when the window started
        Clock::time_point start;
        std::optional<double> rate;  // over the last full window
        std::optional<double> previous;  // over the window before it
    };
    std::chrono::milliseconds window_;
    std::map<std::pair<int, std::uint64_t>, Window> windows_;
};

}  // namespace gpupart
