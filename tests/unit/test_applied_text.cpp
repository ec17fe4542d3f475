// What the shim applied, as `gpupart list`, `gpupart top` and the GUI say it (slot_file.hpp).
#include <gtest/gtest.h>

#include "registry/slot_file.hpp"

using namespace gpupart;

namespace {

// A process whose control block is at `generation` and whose shim applied `applied_generation`.
SlotRecord record_with(std::uint64_t generation, std::uint64_t applied_generation, std::uint64_t launches) {
    SlotRecord r;
    r.control = SlotControl{};
    r.control->has_mask = true;
    r.control->generation = generation;
    r.control->allowed = TpcMask::range(0, 7);
    r.status = SlotStatus{};
    r.status->state = GPUPART_SHIM_ACTIVE;
    r.status->applied_generation = applied_generation;
    r.status->mask_applied = true;
    r.status->applied = TpcMask::range(0, 3);
    r.counters.launches = launches;
    return r;
}

}  // namespace

TEST(AppliedText, TheAppliedMaskOnceTheShimAppliedTheLatestChange) {
    const SlotRecord r = record_with(2, 2, 10);
    EXPECT_FALSE(mask_change_pending(r));
    EXPECT_EQ(applied_text(r), "0-3");
}

TEST(AppliedText, AChangeTheShimHasNotAppliedWaitsForTheNextLaunch) {
    const SlotRecord r = record_with(3, 2, 10);
    EXPECT_TRUE(mask_change_pending(r));
    EXPECT_EQ(applied_text(r), "(next launch)");
}

TEST(AppliedText, BeforeAFirstLaunchNothingIsAppliedAndNothingPends) {
    const SlotRecord r = record_with(3, 0, 0);
    EXPECT_FALSE(mask_change_pending(r));
    EXPECT_EQ(applied_text(r), "-");
}

TEST(AppliedText, WithoutAMaskTheWholeGpuAndWhilePublishingNothingIsKnown) {
    SlotRecord r = record_with(1, 1, 5);
    r.status->mask_applied = false;
    EXPECT_EQ(applied_text(r), "all");
    r.status.reset();  // the shim was mid-publish when the slot was read
    EXPECT_FALSE(mask_change_pending(r));
    EXPECT_EQ(applied_text(r), "(publishing)");
    SlotRecord torn = record_with(4, 1, 5);
    torn.control.reset();  // a control write was in progress
    EXPECT_FALSE(mask_change_pending(torn));
    EXPECT_EQ(applied_text(torn), "0-3");
}
