// The demo's workload at the scale of a real node: past 16 workers each has TPCs of its own on the built-in
// H200 (two 16-worker demos laid the same GPCs twice: every TPC shared, every tile of the app hatched).
#include <set>

#include <gtest/gtest.h>

#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "model/user_error.hpp"
#include "platform/demo_workload.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

TEST(DemoLayout, ThirtyThreeWorkersEachHoldTpcsOfTheirOwn) {
    const Gpu h200 = load_snapshot("builtin:h200").gpus.at(0);
    for (const int count : {17, 33, 40}) {
        const auto specs = demo_workers(count);
        ASSERT_EQ(specs.size(), static_cast<std::size_t>(count));
        TpcMask seen;
        std::set<std::string> names;
        for (const DemoWorkerSpec& spec : specs) {
            const TpcMask mask = resolve_mask(spec.tpcs, h200).mask;
            EXPECT_FALSE(mask.empty()) << spec.name;
            EXPECT_TRUE((mask & seen).empty()) << spec.name << " shares " << (mask & seen).to_list();
            seen |= mask;
            names.insert(spec.name);
        }
        EXPECT_EQ(names.size(), specs.size());  // every worker tells itself apart in the views
        EXPECT_EQ(seen, real_tpcs(h200)) << count;
    }
}

TEST(DemoLayout, UpToSixteenWorkersKeepTheServicesOnWholeGpcs) {
    const auto specs = demo_workers(16);
    EXPECT_EQ(specs.front().tpcs, "gpc0-3");
    EXPECT_THROW(demo_workers(kMaxDemoWorkers + 1), UserError);
    EXPECT_THROW(demo_workers(0), UserError);
}
