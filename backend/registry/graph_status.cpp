#include "registry/graph_status.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace gpupart {

GraphStatus graph_status(const SlotRecord& record) {
    const SlotGraphs& g = record.graphs;
    GraphStatus out;
    out.tracking = g.tracking;
    out.execs = g.execs;
    // The counts are relaxed single fields (registry_layout.h): clamp what a torn read could make inconsistent.
    const bool seen_latest = record.control && record.control->generation == g.generation;
    out.current = seen_latest ? std::min(g.current, g.execs) : 0;
    out.older = g.execs - out.current;
    out.unfollowable = std::min(g.unfollowable, g.execs);
    out.device_launch = std::min(g.device_launch, g.execs);
    out.remasks = g.remasks;
    out.remask_failures = g.remask_failures;
    out.ahead = g.remasker;
    return out;
}

std::string_view to_string(gpupart_graph_tracking tracking) {
    switch (tracking) {
    case GPUPART_GRAPHS_NOT_YET: return "not yet";
    case GPUPART_GRAPHS_FOLLOWED: return "followed";
    case GPUPART_GRAPHS_UNAVAILABLE: return "unavailable";
    case GPUPART_GRAPHS_LAYOUT_UNKNOWN: return "layout unknown";
    }
    return "layout unknown";
}

bool graphs_not_followed(const GraphStatus& g) {
    return g.tracking == GPUPART_GRAPHS_UNAVAILABLE || g.tracking == GPUPART_GRAPHS_LAYOUT_UNKNOWN;
}

namespace {
std::string execs_word(std::uint64_t n) { return n == 1 ? "exec" : "execs"; }
}  // namespace

std::string graph_cell(const GraphStatus& g) {
    if (graphs_not_followed(g)) return "not followed";
    if (g.execs == 0) return "-";
    std::string cell = fmt::format("{}", g.execs);
    if (g.older > 0) cell += fmt::format(", {} older", g.older);
    if (g.unfollowable > 0) cell += fmt::format(", {} unfollowable", g.unfollowable);
    return cell;
}

std::string graph_sentence(const GraphStatus& g) {
    if (graphs_not_followed(g))
        return fmt::format("CUDA graphs are not followed ({}): graph kernels keep the mask of their upload",
                           g.tracking == GPUPART_GRAPHS_UNAVAILABLE ? "the driver refused the graph-call callbacks"
                                                                    : "the driver's callback record is not the one gpupart knows");
    if (g.execs == 0) return {};
    std::string text = fmt::format("{} CUDA graph {}: {} carr{} the current mask", g.execs, execs_word(g.execs), g.current,
                                   g.current == 1 ? "ies" : "y");
    if (g.older > 0)
        text += fmt::format(", {} an older one{}", g.older,
                            g.older > g.unfollowable ? " (re-masked at their next launch)" : "");
    if (g.unfollowable > 0)
        text += fmt::format("; {} cannot be re-masked (conditional bodies, lost or refused nodes) and keep{} an older mask",
                            g.unfollowable, g.unfollowable == 1 ? "s" : "");
    if (g.device_launch > 0)
        text += fmt::format("; {} launched from the device follow{} only when the host launches or uploads {}", g.device_launch,
                            g.device_launch == 1 ? "s" : "", g.device_launch == 1 ? "it" : "them");
    return text;
}

}  // namespace gpupart
