// GPU detection over a constructed sysfs tree.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "platform/gpu_presence.hpp"
#include "snapshot/snapshot_choice.hpp"

namespace fs = std::filesystem;

namespace {

class FakeSysfs : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("gpupart-sysfs-" + std::to_string(::getpid()) + "-" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(root_ / "bus/pci/devices");
    }
    void TearDown() override { fs::remove_all(root_); }
    void add_device(const std::string& bdf, const std::string& vendor, const std::string& device, const std::string& pci_class) {
        const fs::path dir = root_ / "bus/pci/devices" / bdf;
        fs::create_directories(dir);
        std::ofstream(dir / "vendor") << vendor << "\n";
        std::ofstream(dir / "device") << device << "\n";
        std::ofstream(dir / "class") << pci_class << "\n";
    }
    fs::path root_;
};

}  // namespace

TEST_F(FakeSysfs, FindsNvidiaDisplayAnd3dControllersOnly) {
    add_device("0000:00:06.0", "0x10de", "0x2335", "0x030200");  // H200: 3D controller
    add_device("0000:01:00.0", "0x10de", "0x2684", "0x030000");  // VGA
    add_device("0000:01:00.1", "0x10de", "0x22ba", "0x040300");  // the GPU's audio function
    add_device("0000:00:02.0", "0x8086", "0x4680", "0x030000");  // another vendor's GPU
    const auto gpus = gpupart::find_nvidia_gpus(root_.string());
    ASSERT_EQ(gpus.size(), 2u);
    EXPECT_EQ(gpus[0].bus_id, "0000:00:06.0");
    EXPECT_EQ(gpus[0].device_id, "0x2335");
    EXPECT_EQ(gpus[1].bus_id, "0000:01:00.0");
}

TEST_F(FakeSysfs, NoGpuMeansBuiltinH200AndSaysSo) {
    add_device("0000:00:02.0", "0x8086", "0x4680", "0x030000");
    const auto chosen = gpupart::choose_snapshot(std::nullopt, {root_.string(), (root_ / "dev").string(), "/proc", "libnvidia-ml.so.1"});
    EXPECT_TRUE(chosen.builtin);
    EXPECT_FALSE(chosen.live);
    EXPECT_EQ(chosen.origin, "builtin:h200");
    EXPECT_EQ(chosen.why, "no NVIDIA GPU on this machine: showing the built-in recorded H200");
}

TEST_F(FakeSysfs, AGpuIsReadLiveAndASourceThatIsNotThereSaysSo) {
    add_device("0000:00:06.0", "0x10de", "0x2335", "0x030200");
    fs::create_directories(root_ / "dev");  // no nvidiactl: the driver is not loaded
    gpupart::MachineRoots roots{root_.string(), (root_ / "dev").string(), (root_ / "proc").string(),
                                (root_ / "no-libnvidia-ml.so.1").string()};
    const auto chosen = gpupart::choose_snapshot(std::nullopt, roots);
    EXPECT_FALSE(chosen.builtin);
    EXPECT_TRUE(chosen.live);
    EXPECT_EQ(chosen.origin, "live");
    EXPECT_TRUE(chosen.why.starts_with("1 NVIDIA GPU on this machine, read now (rmctrl absent, probe absent, nvml absent, "))
        << chosen.why;
    ASSERT_EQ(chosen.snapshot.gpus.size(), 1u);
    const gpupart::Gpu& gpu = chosen.snapshot.gpus[0];
    EXPECT_EQ(gpu.pci_bus_id.value, "0000:00:06.0");
    EXPECT_EQ(gpu.pci_bus_id.from.source, gpupart::Source::udev);
    EXPECT_TRUE(gpu.tpcs.empty());  // nothing is made up where no source answered
    EXPECT_FALSE(gpu.name.known());
    ASSERT_EQ(chosen.sources.size(), 1u);
    ASSERT_EQ(chosen.sources[0].size(), 6u);  // rmctrl, probe, nvml, udev, nvdebug, mmio
    EXPECT_EQ(chosen.sources[0][0].state, gpupart::SourceState::absent);
    EXPECT_EQ(chosen.sources[0][1].source, gpupart::Source::probe);
    EXPECT_EQ(chosen.sources[0][1].detail,
              "a cached probe is found by GPU UUID and driver version, and the UUID (NVML gives it) is not known");
    EXPECT_EQ(chosen.sources[0][2].source, gpupart::Source::nvml);
    EXPECT_EQ(chosen.sources[0][2].state, gpupart::SourceState::absent);
    EXPECT_EQ(chosen.sources[0][4].source, gpupart::Source::nvdebug);
    EXPECT_EQ(chosen.sources[0][4].state, gpupart::SourceState::absent);
    EXPECT_EQ(chosen.sources[0][5].source, gpupart::Source::mmio);
    EXPECT_NE(chosen.sources[0][5].state, gpupart::SourceState::ok);
    EXPECT_EQ(chosen.sources[0][0].detail, (root_ / "dev/nvidiactl").string() + ": No such file or directory (is the NVIDIA driver loaded?)");
}

TEST_F(FakeSysfs, MissingSysfsIsNoGpu) {
    EXPECT_TRUE(gpupart::find_nvidia_gpus((root_ / "absent").string()).empty());
}
