#pragma once
// What a process's CUDA graphs carry, as every front end words it (gpupart list, the controller's
// findings, gpupart top, the GUI's process table). The shim re-masks a graph exec at its first launch or
// upload after a mask change (docs/cuda-graphs.md); until then the exec still carries the older mask.
#include <cstdint>
#include <string>

#include "registry/slot_file.hpp"

namespace gpupart {

struct GraphStatus {
    gpupart_graph_tracking tracking = GPUPART_GRAPHS_NOT_YET;
    std::uint64_t execs = 0;         // live graph execs
    std::uint64_t current = 0;       // ... that carry the requested mask (or get it at their upload)
    std::uint64_t older = 0;         // ... that still carry an older one
    std::uint64_t unfollowable = 0;  // ... the shim cannot re-mask (they keep an older mask, partly or wholly)
    std::uint64_t device_launch = 0; // ... launched from the device: re-masked only when the host launches or uploads them
    std::uint64_t remasks = 0;
    std::uint64_t remask_failures = 0;
    bool ahead = false;              // the shim's re-mask thread runs: execs are re-masked before their replay
};

// Reads the shim's counts against the control block: after a change the shim has not seen yet (no graph
// launched since), every exec carries the older mask.
GraphStatus graph_status(const SlotRecord& record);

// The shim cannot follow this process's graphs at all (the driver refused, or its record is unknown).
bool graphs_not_followed(const GraphStatus& graphs);

// "followed", "not yet", "unavailable" or "layout unknown".
std::string_view to_string(gpupart_graph_tracking tracking);

// A table cell: "-" (no graph), "4" (all current), "4, 1 older", "4, 1 unfollowable", "not followed".
std::string graph_cell(const GraphStatus& graphs);

// One sentence for a process that has graphs, e.g. "4 CUDA graph execs: 3 carry the current mask, 1 an
// older one (it takes the new one at its next launch)"; empty when it has none and they are followed.
std::string graph_sentence(const GraphStatus& graphs);

}  // namespace gpupart
