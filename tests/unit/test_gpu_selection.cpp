// --gpu as nvidia-smi -i takes it: an index, a UUID or a unique prefix of one, a PCI bus id with or without
// its domain, in any case; anything else is one line naming what there is.
#include <gtest/gtest.h>

#include "model/user_error.hpp"
#include "snapshot/snapshot_choice.hpp"
#include "../lib/thrown_message.hpp"

namespace gpupart {
namespace {

ChosenSnapshot two_gpus() {
    ChosenSnapshot chosen = choose_snapshot(std::string("builtin:h200"));
    Gpu second = chosen.snapshot.gpus.at(0);
    second.index = 1;
    second.uuid.value = "GPU-8d3c0000-1111-2222-3333-444455556666";
    second.pci_bus_id.value = "00000000:17:00.0";
    chosen.snapshot.gpus.at(0).uuid.value = "GPU-8d3cffff-aaaa-bbbb-cccc-ddddeeeeffff";
    chosen.snapshot.gpus.push_back(second);
    return chosen;
}

std::string error_of(const ChosenSnapshot& chosen, std::string_view spec) {
    return gpupart::test::thrown_message([&] { gpu_index(chosen, spec); });
}

TEST(GpuSelection, IndexUuidAndBusIdNameTheSameGpu) {
    const ChosenSnapshot chosen = two_gpus();
    const std::string bus0 = chosen.snapshot.gpus[0].pci_bus_id.value.value();
    EXPECT_EQ(gpu_index(chosen, "1"), 1);
    EXPECT_EQ(gpu_index(chosen, "GPU-8d3c0000-1111-2222-3333-444455556666"), 1);
    EXPECT_EQ(gpu_index(chosen, "gpu-8D3C0000"), 1);                // a unique prefix, any case
    EXPECT_EQ(gpu_index(chosen, "00000000:17:00.0"), 1);            // nvidia-smi's 8-digit domain
    EXPECT_EQ(gpu_index(chosen, "0000:17:00.0"), 1);                // lspci's
    EXPECT_EQ(gpu_index(chosen, "17:00.0"), 1);                     // none
    EXPECT_EQ(gpu_index(chosen, bus0), 0);
    EXPECT_EQ(gpu_index(chosen, "0"), 0);
}

TEST(GpuSelection, NothingOrSeveralIsOneLineListingTheGpus) {
    const ChosenSnapshot chosen = two_gpus();
    const std::string ambiguous = error_of(chosen, "GPU-8d3c");
    EXPECT_NE(ambiguous.find("names several GPUs"), std::string::npos) << ambiguous;
    const std::string none = error_of(chosen, "GPU-ffff");
    EXPECT_NE(none.find("names no GPU"), std::string::npos) << none;
    EXPECT_NE(none.find("GPU-8d3c0000-1111"), std::string::npos) << "lists what there is: " << none;
    EXPECT_NE(error_of(chosen, "2").find("has GPUs 0-1"), std::string::npos) << error_of(chosen, "2");
    EXPECT_NE(error_of(chosen, "99999999999").find("no such GPU index"), std::string::npos);
    EXPECT_NE(error_of(chosen, "").find("empty"), std::string::npos);
    EXPECT_NE(error_of(chosen, "8d3c").find("names no GPU"), std::string::npos);  // a UUID needs its GPU- prefix
    for (const char* spec : {"1", "GPU-8d3c", "\x1b[2J"}) EXPECT_EQ(error_of(chosen, spec).find('\n'), std::string::npos);
    EXPECT_EQ(error_of(chosen, "\x1b[2J").find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace gpupart
