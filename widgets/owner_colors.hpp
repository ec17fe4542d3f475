#pragma once
// Colours for process owners: the same process keeps its colour across refreshes and views
// (floorplan, legend, process table, charts) for as long as it lives, and up to twelve live owners
// never share one. The preferred hue is a function of pid and start time, not of the order processes
// were seen in. GUI thread only.
#include <cstdint>
#include <set>
#include <utility>

#include <QColor>

namespace gpupart::widgets {

QColor owner_color(int pid, std::uint64_t start_time);
// Frees the colours of processes not in `live` (called on refresh), so newcomers can take them.
void forget_owner_colors_except(const std::set<std::pair<int, std::uint64_t>>& live);
QColor unowned_color();   // a TPC no partitioned process holds (free for anyone unpartitioned)
QColor hole_color();      // outline of a floorswept slot

}  // namespace gpupart::widgets
