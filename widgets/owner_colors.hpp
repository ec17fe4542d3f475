#pragma once
// Stable colours for process owners: the same process keeps its colour across refreshes, views
// (floorplan, legend, process table, charts) and runs, because the colour is a function of the pid
// and start time, not of the order processes were seen in.
#include <cstdint>

#include <QColor>

namespace gpupart::widgets {

QColor owner_color(int pid, std::uint64_t start_time);
QColor unowned_color();   // a TPC no partitioned process holds (free for anyone unpartitioned)
QColor hole_color();      // outline of a floorswept slot

}  // namespace gpupart::widgets
