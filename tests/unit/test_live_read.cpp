// The live read of a constructed machine (a GPU in a sysfs tree, its RM controls replayed from the recorded
// H100 replies, NVML at a path where there is none): a read for a partition command leaves NVML unread
// exactly when the RM controls gave every GPU's UUID and processes, and reads it otherwise.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "rm_fixture_transport.hpp"
#include "sources/live_topology.hpp"

using namespace gpupart;

namespace {

const std::string kFixtures = std::string(GPUPART_FIXTURES) + "/h100-rmctrl";

class LiveRead_ : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = std::filesystem::path(::testing::TempDir()) / ("live-read-" + std::to_string(::getpid()));
        const auto device = root_ / "sys/bus/pci/devices/0000:01:00.0";
        std::filesystem::create_directories(device);
        std::filesystem::create_directories(root_ / "proc");
        std::ofstream(device / "vendor") << "0x10de\n";
        std::ofstream(device / "device") << "0x2330\n";
        std::ofstream(device / "class") << "0x030200\n";
        roots_.sysfs = (root_ / "sys").string();
        roots_.proc = (root_ / "proc").string();
        roots_.dev = (root_ / "dev").string();
        roots_.nvml_library = (root_ / "no-libnvidia-ml.so.1").string();
    }
    void TearDown() override { std::filesystem::remove_all(root_); }

    LiveTopology read(LiveRead what, test::FixtureFaults faults) const {
        return read_live_topology(roots_, what, [faults] {
            return std::make_unique<test::RmFixtureTransport>(test::load_recorded_rm(kFixtures, "nobody"), faults);
        });
    }

    static const SourceStatus& nvml_of(const LiveTopology& live) {
        for (const SourceStatus& status : live.sources.at(0))
            if (status.source == Source::nvml) return status;
        throw std::runtime_error("no NVML status");
    }

    std::filesystem::path root_;
    MachineRoots roots_;
};

test::FixtureFaults with_identity() {
    test::FixtureFaults faults;
    faults.gid = "GPU-6b739b16-7324-b8e6-a08f-57f90c3491a5";
    faults.name = "NVIDIA H100 80GB HBM3";
    return faults;
}

}  // namespace

TEST_F(LiveRead_, APartitionReadSkipsNvmlWhenTheDriverGaveTheUuid) {
    const LiveTopology live = read(LiveRead::partition, with_identity());
    ASSERT_EQ(live.snapshot.gpus.size(), 1u);
    const Gpu& gpu = live.snapshot.gpus[0];
    ASSERT_TRUE(gpu.uuid.known());
    EXPECT_EQ(*gpu.uuid.value, "GPU-6b739b16-7324-b8e6-a08f-57f90c3491a5");
    EXPECT_EQ(gpu.gpcs.size(), 8u);
    EXPECT_EQ(nvml_of(live).state, SourceState::not_read);
    EXPECT_EQ(nvml_of(live).detail, "not needed: the RM controls gave every GPU's UUID and processes");
}

TEST_F(LiveRead_, AFullReadAlwaysAsksNvml) {
    const LiveTopology live = read(LiveRead::full, with_identity());
    EXPECT_EQ(nvml_of(live).state, SourceState::absent);  // asked: there is no library at that path
    EXPECT_TRUE(live.snapshot.gpus[0].uuid.known());      // the driver's word stands
}

TEST_F(LiveRead_, APartitionReadAsksNvmlWhenTheDriverGaveNoUuid) {
    const LiveTopology live = read(LiveRead::partition, {});  // GPU_GET_GID_INFO not answered
    EXPECT_EQ(nvml_of(live).state, SourceState::absent);
    EXPECT_FALSE(live.snapshot.gpus[0].uuid.known());
}

TEST_F(LiveRead_, APartitionReadAsksNvmlWhenTheRmReadFailed) {
    test::FixtureFaults faults = with_identity();
    faults.control_errno_cmd = 0x2080018D;  // an ioctl refused mid-read: RM gives nothing
    const LiveTopology live = read(LiveRead::partition, faults);
    EXPECT_EQ(nvml_of(live).state, SourceState::absent);
}
