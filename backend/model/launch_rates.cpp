#include "model/launch_rates.hpp"

namespace gpupart {

std::optional<double> LaunchRates::update(int pid, std::uint64_t start_time, std::uint64_t launches, Clock::time_point now) {
    auto [it, first] = windows_.try_emplace({pid, start_time}, Window{launches, now, std::nullopt, std::nullopt});
    if (first) return std::nullopt;
    Window& window = it->second;
    if (launches < window.launches) {  // a counter never goes back: start over rather than show a negative rate
        window = Window{launches, now, std::nullopt, std::nullopt};
        return std::nullopt;
    }
    if (now - window.start < window_) return window.rate;
    const double seconds = std::chrono::duration<double>(now - window.start).count();
    window = Window{launches, now, static_cast<double>(launches - window.launches) / seconds, window.rate};
    return window.rate;
}

std::optional<LaunchRates::Change> LaunchRates::last_change(int pid, std::uint64_t start_time) const {
    const auto it = windows_.find({pid, start_time});
    if (it == windows_.end() || !it->second.rate || !it->second.previous) return std::nullopt;
    return Change{*it->second.previous, *it->second.rate};
}

void LaunchRates::forget_except(const std::vector<std::pair<int, std::uint64_t>>& alive) {
    std::map<std::pair<int, std::uint64_t>, Window> kept;
    for (const auto& key : alive)
        if (auto it = windows_.find(key); it != windows_.end()) kept.insert(*it);
    windows_ = std::move(kept);
}

}  // namespace gpupart
