#pragma once
// Interference between partitions, seen in the launch rates: TPC partitions remove SM sharing, but
// memory bandwidth and the board's power limit stay shared (docs/rules.md#interference), so a process
// whose launch rate falls while a neighbour's on the same GPU rises is likely slowed by that neighbour.
// A measurement of the running system, not a rule about masks: the live views (gpupart top, the app)
// show it, plans cannot predict it.
#include <vector>

#include "controller/finding.hpp"
#include "controller/system_state.hpp"
#include "model/launch_rates.hpp"

namespace gpupart {

// A rate change counts from this fraction on (a drop to at most 1 - x, a rise to at least 1 + x), and only
// for processes launching at least kInterferenceMinRate kernels per second before (idle ones are noise).
inline constexpr double kInterferenceChange = 0.25;
inline constexpr double kInterferenceMinRate = 20.0;

// One warning per partitioned process whose rate dropped over its last two windows while another
// partitioned process on this GPU rose, naming the neighbour that rose most.
std::vector<Finding> interference_findings(const SystemState& state, const LaunchRates& rates);

}  // namespace gpupart
