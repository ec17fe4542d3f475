// What the shim applied, as `gpupart list`, `gpupart top` and the GUI say it (slot_file.hpp).
#include <gtest/gtest.h>

#include "registry/slot_file.hpp"

using namespace gpupart;

namespace {

constexpr const char* kGpu = "GPU-263da6ff-9608-67cf-9bce-a8c85c7c1cd0";
constexpr const char* kOtherGpu = "GPU-f52cbf16-60f9-2ddf-2c8f-1a4831a7446b";

// A process whose control block is at `generation` and whose shim applied `applied_generation`, as a registry
// that knows the GPU's map reads it (TPC numbers).
SlotRecord record_with(std::uint64_t generation, std::uint64_t applied_generation, std::uint64_t launches) {
    SlotRecord r;
    r.control = SlotControl{};
    r.control->generation = generation;
    r.control->gpus.push_back(GpuControl{kGpu, true, TpcMask::range(0, 7), TpcMask::range(0, 127), true});
    r.status = SlotStatus{};
    r.status->state = GPUPART_SHIM_ACTIVE;
    GpuStatus here;
    here.uuid = kGpu;
    here.state = GPUPART_SHIM_ACTIVE;
    here.applied_generation = applied_generation;
    here.mask_applied = true;
    here.applied = TpcMask::range(0, 3);
    here.numbered = true;
    here.launches = launches;
    r.status->gpus.push_back(here);
    r.counters.launches = launches;
    return r;
}

}  // namespace

TEST(AppliedText, TheAppliedMaskOnceTheShimAppliedTheLatestChange) {
    const SlotRecord r = record_with(2, 2, 10);
    EXPECT_FALSE(mask_change_pending(r, kGpu));
    EXPECT_EQ(applied_text(r, kGpu), "0-3");
}

TEST(AppliedText, AChangeTheShimHasNotAppliedWaitsForTheNextLaunch) {
    const SlotRecord r = record_with(3, 2, 10);
    EXPECT_TRUE(mask_change_pending(r, kGpu));
    EXPECT_EQ(applied_text(r, kGpu), "(next launch)");
}

TEST(AppliedText, BeforeAFirstLaunchNothingIsAppliedAndNothingPends) {
    const SlotRecord r = record_with(3, 0, 0);
    EXPECT_FALSE(mask_change_pending(r, kGpu));
    EXPECT_EQ(applied_text(r, kGpu), "-");
}

TEST(AppliedText, WithoutAMaskTheWholeGpuAndWhilePublishingNothingIsKnown) {
    SlotRecord r = record_with(1, 1, 5);
    r.status->gpus[0].mask_applied = false;
    EXPECT_EQ(applied_text(r, kGpu), "all");
    r.status->gpus[0].publishing = true;  // the shim was mid-publish when the slot was read
    EXPECT_FALSE(mask_change_pending(r, kGpu));
    EXPECT_EQ(applied_text(r, kGpu), "(publishing)");
    SlotRecord torn = record_with(4, 1, 5);
    torn.control.reset();  // a control write was in progress
    EXPECT_FALSE(mask_change_pending(torn, kGpu));
    EXPECT_EQ(applied_text(torn, kGpu), "0-3");
}

TEST(AppliedText, EachGpuSaysItsOwnAndAGpuWithNoLaunchSaysNothing) {
    SlotRecord r = record_with(3, 3, 10);
    r.control->gpus.push_back(GpuControl{kOtherGpu, true, TpcMask::range(9, 16), TpcMask::range(0, 127), true});
    EXPECT_EQ(applied_text(r, kGpu), "0-3");
    EXPECT_EQ(applied_text(r, kOtherGpu), "-");  // a mask there, no context there yet
    EXPECT_FALSE(mask_change_pending(r, kOtherGpu));
    EXPECT_EQ(gpus_of(r), (std::vector<std::string>{kGpu, kOtherGpu}));
    GpuStatus other;
    other.uuid = kOtherGpu;
    other.state = GPUPART_SHIM_ACTIVE;
    other.applied_generation = 2;
    other.launches = 4;
    r.status->gpus.push_back(other);
    EXPECT_TRUE(mask_change_pending(r, kOtherGpu));  // generation 3 not applied there yet
    EXPECT_FALSE(mask_change_pending(r, kGpu));
}

// A slot read by a view that does not know its GPU's map keeps the descriptor bits, and says so: never as
// TPC numbers, which would name other TPCs.
TEST(AppliedText, BitsOfAGpuWhoseMapIsNotKnownAreShownAsBits) {
    SlotRecord r = record_with(1, 1, 5);
    r.status->gpus[0].numbered = false;
    EXPECT_EQ(applied_text(r, kGpu), "bits:0xf");
    EXPECT_EQ(mask_text(TpcMask::range(0, 3), true), "0-3");
}
