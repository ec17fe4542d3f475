#pragma once
// An RmTransport that replays the recorded H100 replies (tests/fixtures/h100-rmctrl) to the real RM
// reader, the way the driver would: it unpacks the escape argument blocks and the control parameter
// blocks at the offsets NVIDIA's open-gpu-kernel-modules headers give (written out here independently of the reader's own
// layout constants, so a wrong offset in either shows up), checks each block's exact size, and
// answers each control with what was recorded: raw bytes where the recording printed them, values
// encoded into the parameter layout where it printed decoded values.
//
// What the recording does not hold is refused, never made up: a control it never asked, a runlist
// id of an engine other than GR0 and COPY0-4, the channel-group count of an engine other than GR0,
// the allocated channels of a runlist other than 0, the UUID and the name (unless a test supplies them). Such answers come back as kNotRecorded.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "recorded_rm_replies.hpp"
#include "sources/rm_transport.hpp"

namespace gpupart::test {

inline constexpr std::uint32_t kNotRecorded = 0x56;  // NV_ERR_NOT_SUPPORTED

struct FixtureFaults {
    std::optional<int> open_control_errno;     // open(/dev/nvidiactl) fails with it
    std::optional<std::string> driver_version; // the version query answers this instead of the recorded one
    std::optional<int> gpu_node_errno;         // open(/dev/nvidiaN) fails with it
    std::optional<std::uint32_t> device_alloc_status;  // NV01_DEVICE_0 allocation answers this RM status
    std::optional<std::uint32_t> control_errno_cmd;    // this control's ioctl fails with EPERM
    // FIFO_GET_INFO IS_PER_RUNLIST_CHANNEL_RAM_SUPPORTED (index 7), which the recording did not ask: unset
    // replays it as not recorded; set, the replay answers it, to test both of the reader's paths.
    std::optional<std::uint32_t> per_runlist_channel_ram;
    // GPU_GET_GID_INFO and GPU_GET_NAME_STRING, which the recording did not ask: unset replays them as not
    // recorded; set, the replay answers these bytes (up to the field's size, NUL-terminated where they fit).
    std::optional<std::string> gid;
    std::optional<std::string> name;
    std::string bus_id = "0000:01:00.0";  // the recording did not print the PCI address: the replay's card sits here
};

class RmFixtureTransport final : public RmTransport {
public:
    explicit RmFixtureTransport(RecordedRm recorded, FixtureFaults faults = {});

    void open_control() override;
    void escape(std::uint8_t nr, std::span<std::byte> arg) override;
    void open_gpu_node(unsigned minor) override;
    void close_gpu_node() override;
    std::string control_path() const override { return "/dev/nvidiactl"; }
    std::string gpu_node_path(unsigned minor) const override { return "/dev/nvidia" + std::to_string(minor); }

    const std::vector<std::uint8_t>& escapes() const { return escapes_; }      // every escape issued, in order
    const std::vector<std::uint32_t>& controls() const { return controls_; }   // every control cmd issued
    bool client_freed() const { return client_freed_; }

private:
    void alloc(std::span<std::byte> arg);
    void control(std::span<std::byte> arg);
    std::uint32_t answer(std::uint32_t cmd, std::span<std::byte> params);

    RecordedRm recorded_;
    FixtureFaults faults_;
    bool control_open_ = false;
    bool gpu_node_open_ = false;
    bool client_freed_ = false;
    std::uint32_t client_ = 0;
    std::uint32_t subdevice_ = 0;
    std::vector<std::uint8_t> escapes_;
    std::vector<std::uint32_t> controls_;
};

}  // namespace gpupart::test
