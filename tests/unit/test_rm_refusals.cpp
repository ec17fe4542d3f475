// Every way the RM-control source can be absent or refused gives one line a user can act on, and
// nothing is read past the refusal.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>

#include "rm_fixture_transport.hpp"
#include "sources/rm_device_transport.hpp"
#include "sources/rm_driver_branch.hpp"
#include "sources/rm_reader.hpp"

using namespace gpupart;
using gpupart::test::FixtureFaults;
using gpupart::test::RmFixtureTransport;

namespace {

const std::string kFixtures = std::string(GPUPART_FIXTURES) + "/h100-rmctrl";

RmReadResult read_with(FixtureFaults faults, RmFixtureTransport** keep = nullptr) {
    static std::unique_ptr<RmFixtureTransport> transport;
    transport = std::make_unique<RmFixtureTransport>(test::load_recorded_rm(kFixtures, "nobody"), std::move(faults));
    if (keep) *keep = transport.get();
    return read_rm_facts(*transport, "0000:01:00.0", false);
}

void expect_one_line(const SourceStatus& status) {
    EXPECT_FALSE(status.detail.empty());
    EXPECT_EQ(status.detail.find('\n'), std::string::npos) << status.detail;
    EXPECT_EQ(status.source, Source::rmctrl);
}

}  // namespace

TEST(RmRefusals, NoControlNodeIsAbsent) {
    const auto dir = std::filesystem::temp_directory_path() / ("gpupart-nodev-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    RmDeviceTransport transport(dir.string());
    const RmReadResult result = read_rm_facts(transport, "0000:01:00.0", false);
    std::filesystem::remove_all(dir);
    EXPECT_EQ(result.status.state, SourceState::absent);
    EXPECT_FALSE(result.facts);
    expect_one_line(result.status);
    EXPECT_EQ(result.status.detail, dir.string() + "/nvidiactl: No such file or directory (is the NVIDIA driver loaded?)");
}

TEST(RmRefusals, AControlNodeThatIsNoDriverFails) {
    // A plain file where the node should be: open works, the ioctl does not (ENOTTY).
    const auto dir = std::filesystem::temp_directory_path() / ("gpupart-fakedev-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    { std::ofstream(dir / "nvidiactl") << "not a device\n"; }
    RmDeviceTransport transport(dir.string());
    const RmReadResult result = read_rm_facts(transport, "0000:01:00.0", false);
    std::filesystem::remove_all(dir);
    EXPECT_EQ(result.status.state, SourceState::failed);
    expect_one_line(result.status);
    EXPECT_NE(result.status.detail.find("nvidiactl: ioctl escape 0xd2"), std::string::npos) << result.status.detail;
}

TEST(RmRefusals, AnUnverifiedDriverBranchIsRefusedBeforeAnythingElseIsAsked) {
    RmFixtureTransport* transport = nullptr;
    const RmReadResult result = read_with([] { FixtureFaults f; f.driver_version = "575.51.02"; return f; }(), &transport);
    EXPECT_EQ(result.status.state, SourceState::unsupported);
    expect_one_line(result.status);
    EXPECT_EQ(result.status.detail,
              "driver 575.51.02: gpupart's RM-control layouts are verified for driver branch 580 only, not 575 (the driver "
              "demands exact parameter sizes; a guessed layout is never used)");
    EXPECT_EQ(transport->escapes(), (std::vector<std::uint8_t>{210}));  // the version query alone
    EXPECT_FALSE(read_with([] { FixtureFaults f; f.driver_version = "590.44.01"; return f; }()).facts);
}

TEST(RmRefusals, PermissionDeniedOnTheControlNodeIsRefused) {
    const RmReadResult result = read_with([] { FixtureFaults f; f.open_control_errno = EACCES; return f; }());
    EXPECT_EQ(result.status.state, SourceState::refused);
    expect_one_line(result.status);
    EXPECT_EQ(result.status.detail,
              "/dev/nvidiactl: Permission denied (the device node's mode or group does not admit this user)");
}

TEST(RmRefusals, PermissionDeniedOnTheGpuNodeIsRefused) {
    const RmReadResult result = read_with([] { FixtureFaults f; f.gpu_node_errno = EPERM; return f; }());
    EXPECT_EQ(result.status.state, SourceState::refused);
    expect_one_line(result.status);
    EXPECT_NE(result.status.detail.find("/dev/nvidia0: Operation not permitted"), std::string::npos) << result.status.detail;
}

TEST(RmRefusals, TheDriverRefusingTheDeviceIsRefused) {
    const RmReadResult result = read_with([] { FixtureFaults f; f.device_alloc_status = 0x1B; return f; }());
    EXPECT_EQ(result.status.state, SourceState::refused);
    expect_one_line(result.status);
    EXPECT_EQ(result.status.detail,
              "NV01_DEVICE_0 allocation: NV_ERR_INSUFFICIENT_PERMISSIONS (0x1b) (this user may not open the GPU)");
}

TEST(RmRefusals, AnIoctlRefusedWithEpermIsRefused) {
    const RmReadResult result = read_with([] { FixtureFaults f; f.control_errno_cmd = 0x2080121Bu; return f; }());
    EXPECT_EQ(result.status.state, SourceState::refused);
    expect_one_line(result.status);
    EXPECT_NE(result.status.detail.find("Operation not permitted"), std::string::npos);
}

TEST(RmRefusals, AGpuTheDriverDoesNotDriveFails) {
    RmFixtureTransport transport(test::load_recorded_rm(kFixtures, "nobody"));
    const RmReadResult result = read_rm_facts(transport, "0000:99:00.0", false);
    EXPECT_EQ(result.status.state, SourceState::failed);
    expect_one_line(result.status);
    EXPECT_EQ(result.status.detail, "driver 580.159.04 drives no GPU at 0000:99:00.0 (1 other)");
}

TEST(RmRefusals, CardListAlsoChecksTheBranchFirst) {
    RmFixtureTransport transport(test::load_recorded_rm(kFixtures, "nobody"), [] { FixtureFaults f; f.driver_version = "570.86.16"; return f; }());
    const RmCardList list = read_rm_cards(transport);
    EXPECT_EQ(list.status.state, SourceState::unsupported);
    EXPECT_TRUE(list.cards.empty());
    RmFixtureTransport good(test::load_recorded_rm(kFixtures, "nobody"));
    const RmCardList cards = read_rm_cards(good);
    EXPECT_EQ(cards.status.state, SourceState::ok);
    ASSERT_EQ(cards.cards.size(), 1u);
    EXPECT_EQ(cards.cards[0].gpu_id, 6u);
    EXPECT_EQ(cards.cards[0].minor, 0u);
}

TEST(RmDriverBranch, OnlyBranch580IsVerified) {
    EXPECT_EQ(driver_branch("580.159.04"), "580");
    EXPECT_EQ(driver_branch("garbage"), std::nullopt);
    EXPECT_EQ(driver_branch(".1"), std::nullopt);
    EXPECT_TRUE(unverified_driver_reason("580.159.04").empty());
    EXPECT_TRUE(unverified_driver_reason("580.65.06").empty());
    EXPECT_FALSE(unverified_driver_reason("58.0").empty());
    EXPECT_FALSE(unverified_driver_reason("5800.1").empty());
    EXPECT_NE(unverified_driver_reason("x1.2").find("not a driver version"), std::string::npos);
}
