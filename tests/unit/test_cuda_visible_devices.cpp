// CUDA_VISIBLE_DEVICES as the CUDA driver reads it: which of gpupart's GPUs a program will see, in order.
#include <gtest/gtest.h>

#include "model/cuda_visible_devices.hpp"

namespace gpupart {
namespace {

Gpu board(int index, const char* name, const char* uuid) {
    Gpu gpu;
    gpu.index = index;
    gpu.name.value = name;
    gpu.uuid.value = uuid;
    return gpu;
}

const std::vector<Gpu> kSame = {board(0, "NVIDIA H100", "GPU-aaaa0000-0000"), board(1, "NVIDIA H100", "GPU-bbbb0000-0000"),
                                board(2, "NVIDIA H100", "GPU-bbcc0000-0000")};
const std::vector<Gpu> kMixed = {board(0, "NVIDIA H100", "GPU-aaaa0000-0000"), board(1, "NVIDIA H200", "GPU-bbbb0000-0000")};

std::vector<int> seen(const std::vector<Gpu>& gpus, std::optional<std::string_view> value,
                      std::optional<std::string_view> order = std::nullopt) {
    const VisibleGpus visible = resolve_cuda_visible_devices(gpus, value, order);
    EXPECT_EQ(visible.problem, "");
    return visible.indexes;
}

TEST(CudaVisibleDevices, UnsetShowsEveryGpuInBusOrder) { EXPECT_EQ(seen(kSame, std::nullopt), (std::vector<int>{0, 1, 2})); }

TEST(CudaVisibleDevices, EmptyHidesEveryGpu) { EXPECT_TRUE(seen(kSame, "").empty()); }

TEST(CudaVisibleDevices, OrdinalsPickAndOrder) {
    EXPECT_EQ(seen(kSame, "2,0"), (std::vector<int>{2, 0}));
    EXPECT_EQ(seen(kSame, " 1 "), (std::vector<int>{1}));
}

TEST(CudaVisibleDevices, UuidsAndUniquePrefixes) {
    EXPECT_EQ(seen(kSame, "GPU-bbcc0000-0000,GPU-aaaa"), (std::vector<int>{2, 0}));
    EXPECT_EQ(seen(kSame, "gpu-AAAA"), (std::vector<int>{0}));  // as CUDA, case does not matter
}

TEST(CudaVisibleDevices, ReadingStopsAtTheFirstEntryNamingNoDevice) {
    EXPECT_EQ(seen(kSame, "1,7,0"), (std::vector<int>{1}));
    EXPECT_EQ(seen(kSame, "GPU-bb,0"), std::vector<int>{});  // a prefix of two UUIDs names none
    EXPECT_EQ(seen(kSame, "x,0"), std::vector<int>{});
    EXPECT_EQ(seen(kSame, "0,0,1"), (std::vector<int>{0}));
    EXPECT_EQ(seen(kSame, "-1,0"), std::vector<int>{});
}

TEST(CudaVisibleDevices, OrdinalsOfMixedModelsNeedBusOrder) {
    const VisibleGpus refused = resolve_cuda_visible_devices(kMixed, "1", std::nullopt);
    EXPECT_TRUE(refused.indexes.empty());
    EXPECT_NE(refused.problem.find("CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos) << refused.problem;
    EXPECT_EQ(seen(kMixed, "1", "PCI_BUS_ID"), (std::vector<int>{1}));
    EXPECT_EQ(seen(kMixed, "GPU-bbbb"), (std::vector<int>{1}));  // a UUID needs no order
}

TEST(CudaVisibleDevices, MigInstancesAreRefused) {
    const VisibleGpus refused = resolve_cuda_visible_devices(kSame, "MIG-1234", std::nullopt);
    EXPECT_NE(refused.problem.find("MIG"), std::string::npos);
}

}  // namespace
}  // namespace gpupart
