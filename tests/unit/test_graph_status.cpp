// What a process's CUDA graph counts mean against its control block, and how every front end words them.
#include <gtest/gtest.h>

#include "registry/graph_status.hpp"

using namespace gpupart;

namespace {

SlotRecord record_with(std::uint64_t control_generation, SlotGraphs graphs) {
    SlotRecord r;
    r.control = SlotControl{};
    r.control->gpus.push_back(GpuControl{"GPU-263da6ff-9608-67cf-9bce-a8c85c7c1cd0", true, TpcMask::range(0, 7), TpcMask::range(0, 127)});
    r.control->generation = control_generation;
    r.graphs = graphs;
    return r;
}

SlotGraphs published(std::uint64_t generation, std::uint64_t execs, std::uint64_t current, std::uint64_t unfollowable = 0) {
    SlotGraphs g;
    g.tracking = GPUPART_GRAPHS_FOLLOWED;
    g.generation = generation;
    g.execs = execs;
    g.current = current;
    g.unfollowable = unfollowable;
    return g;
}

}  // namespace

TEST(GraphStatus, CountsAreTakenAsPublishedWhenTheShimSawTheLatestChange) {
    const GraphStatus g = graph_status(record_with(3, published(3, 4, 3)));
    EXPECT_EQ(g.execs, 4u);
    EXPECT_EQ(g.current, 3u);
    EXPECT_EQ(g.older, 1u);
    EXPECT_EQ(graph_cell(g), "4, 1 older");
}

TEST(GraphStatus, EveryExecIsOlderAfterAChangeTheShimHasNotSeenYet) {
    // gpupart set wrote generation 4; no graph was launched since, so the shim still counts for 3.
    const GraphStatus g = graph_status(record_with(4, published(3, 4, 4)));
    EXPECT_EQ(g.current, 0u);
    EXPECT_EQ(g.older, 4u);
    EXPECT_EQ(graph_sentence(g), "4 CUDA graph execs: 0 carry the current mask, 4 an older one (re-masked at their next launch)");
}

TEST(GraphStatus, ABlockBeingWrittenCountsAsAChange) {
    SlotRecord r = record_with(3, published(3, 2, 2));
    r.control.reset();
    EXPECT_EQ(graph_status(r).older, 2u);
}

TEST(GraphStatus, TornCountsAreClamped) {
    const GraphStatus g = graph_status(record_with(3, published(3, 2, 5, 7)));
    EXPECT_EQ(g.current, 2u);
    EXPECT_EQ(g.older, 0u);
    EXPECT_EQ(g.unfollowable, 2u);
}

TEST(GraphStatus, NoGraphsIsADash) {
    EXPECT_EQ(graph_cell(graph_status(record_with(1, published(1, 0, 0)))), "-");
    EXPECT_EQ(graph_sentence(graph_status(record_with(1, published(1, 0, 0)))), "");
    EXPECT_EQ(graph_cell(GraphStatus{}), "-");  // not yet (libcuda not loaded, or a demo worker)
}

TEST(GraphStatus, UnfollowableExecsAreSaid) {
    const GraphStatus g = graph_status(record_with(2, published(2, 3, 2, 1)));
    EXPECT_EQ(graph_cell(g), "3, 1 older, 1 unfollowable");
    EXPECT_EQ(graph_sentence(g), "3 CUDA graph execs: 2 carry the current mask, 1 an older one; 1 cannot be re-masked "
                                 "(conditional bodies, lost or refused nodes) and keeps an older mask");
}

TEST(GraphStatus, GraphsThatAreNotFollowedAreSaidEvenWithoutExecs) {
    SlotGraphs g = published(0, 0, 0);
    g.tracking = GPUPART_GRAPHS_LAYOUT_UNKNOWN;
    const GraphStatus status = graph_status(record_with(1, g));
    EXPECT_EQ(graph_cell(status), "not followed");
    EXPECT_NE(graph_sentence(status).find("not the one gpupart knows"), std::string::npos);
    EXPECT_EQ(to_string(GPUPART_GRAPHS_UNAVAILABLE), "unavailable");
}

TEST(GraphStatus, DeviceLaunchedExecsAreSaid) {
    SlotGraphs g = published(2, 1, 1);
    g.device_launch = 1;
    EXPECT_EQ(graph_sentence(graph_status(record_with(2, g))),
              "1 CUDA graph exec: 1 carries the current mask; 1 launched from the device follows only when the host launches "
              "or uploads it");
}
