// What `gpupart run` tells the shim about the driver's stream mask (controller/stream_mask_env.hpp), on the
// built-in H200: nothing without a probe's verdict, and with one the GPU, offset, driver, descriptor version
// and the TPC number -> descriptor bit map the shim translates masks with.
#include <gtest/gtest.h>

#include "controller/stream_mask_env.hpp"
#include "model/provenance.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

Gpu verified_h200() {
    Gpu gpu = load_snapshot("builtin:h200").gpus.at(0);
    // The recording names no UUID; a live read does.
    gpu.uuid = known_fact(std::string("GPU-263da6ff-0000-0000-0000-000000000000"), Provenance{Source::nvml, "test"});
    gpu.stream_mask_offset = known_fact(0x51c, Provenance{Source::probe, "test"});
    return gpu;
}

}  // namespace

TEST(StreamMaskEnv, NothingWithoutAProbesVerdict) {
    const StreamMaskEnv env = stream_mask_env(load_snapshot("builtin:h200").gpus.at(0));
    EXPECT_FALSE(env.value);
    EXPECT_EQ(env.why, "no probe of this GPU and driver verified the driver's stream mask (run `gpupart probe`)");
}

TEST(StreamMaskEnv, AVerdictCarriesTheGpuDriverAndTpcNumbering) {
    const Gpu gpu = verified_h200();
    const StreamMaskEnv env = stream_mask_env(gpu);
    ASSERT_TRUE(env.value) << env.why;
    const std::string& v = *env.value;
    const std::string head = *gpu.uuid.value + "=0x51c," + *gpu.driver_version.value + ",0x40,";
    ASSERT_EQ(v.substr(0, head.size()), head);
    const std::string map = v.substr(head.size());
    ASSERT_EQ(map.size(), 256u);
    // TPC 0 is bit 0 (SMs 0-1), TPC 1 bit 9 (SMs 2-3), TPC 8 bit 1 (SMs 16-17), TPC 65 bit 83 (SMs 130-131).
    EXPECT_EQ(map.substr(0, 4), "0009");
    EXPECT_EQ(map.substr(16, 2), "01");
    EXPECT_EQ(map.substr(130, 2), "53");
    EXPECT_EQ(map.substr(132), std::string(124, 'f'));  // no TPC 66 and above
}

TEST(StreamMaskEnv, NoNumberingNoVerdict) {
    Gpu gpu = verified_h200();
    for (Tpc& tpc : gpu.tpcs) tpc.mask_bit.reset();
    const StreamMaskEnv env = stream_mask_env(gpu);
    EXPECT_FALSE(env.value);
    EXPECT_EQ(env.why.rfind("the GPU's TPC numbering is not known: ", 0), 0u) << env.why;
}

TEST(StreamMaskEnv, ADriverVersionThatWouldBreakTheValueIsNotPassedOn) {
    Gpu gpu = verified_h200();
    gpu.driver_version = known_fact(std::string("580,1"), Provenance{Source::probe, "test"});
    const StreamMaskEnv env = stream_mask_env(gpu);
    EXPECT_FALSE(env.value);
    EXPECT_EQ(env.why, "the driver version cannot be passed on");
}
