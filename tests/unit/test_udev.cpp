// The libudev source: the GPU filter as a pure function (sysfs attributes and uevent properties), the
// driver's device-minor line, and enumeration and monitoring on this machine's real sysfs.
#include <gtest/gtest.h>

#include <poll.h>

#include "platform/gpu_presence.hpp"
#include "platform/udev_filter.hpp"
#include "sources/udev_source.hpp"

using gpupart::SourceState;

TEST(UdevFilter, NvidiaDisplayClassesOnly) {
    EXPECT_TRUE(gpupart::is_nvidia_gpu("0x10de", "0x030200"));   // 3D controller (H100, H200)
    EXPECT_TRUE(gpupart::is_nvidia_gpu("0x10DE", "0x030000"));   // VGA
    EXPECT_TRUE(gpupart::is_nvidia_gpu("0x10de", "0x038000"));   // other display controller
    EXPECT_FALSE(gpupart::is_nvidia_gpu("0x10de", "0x040300"));  // the GPU's audio function
    EXPECT_FALSE(gpupart::is_nvidia_gpu("0x10de", "0x0c0330"));  // its USB controller
    EXPECT_FALSE(gpupart::is_nvidia_gpu("0x8086", "0x030000"));  // another vendor's GPU
    EXPECT_FALSE(gpupart::is_nvidia_gpu("0x10de", "0x0302"));    // not a class value
    EXPECT_FALSE(gpupart::is_nvidia_gpu("", ""));
}

TEST(UdevFilter, UeventPropertiesIncludingRemoval) {
    const auto gpu = gpupart::nvidia_gpu_from_uevent({{"ACTION", "remove"}, {"PCI_ID", "10DE:2335"}, {"PCI_CLASS", "30200"},
                                                      {"PCI_SLOT_NAME", "0000:04:00.0"}, {"SUBSYSTEM", "pci"}});
    ASSERT_TRUE(gpu.has_value());
    EXPECT_EQ(gpu->bus_id, "0000:04:00.0");
    EXPECT_EQ(gpu->device_id, "0x2335");
    EXPECT_EQ(gpu->pci_class, "0x030200");
    EXPECT_FALSE(gpupart::nvidia_gpu_from_uevent({{"PCI_ID", "10DE:22BA"}, {"PCI_CLASS", "40300"}, {"PCI_SLOT_NAME", "0000:04:00.1"}}));
    EXPECT_FALSE(gpupart::nvidia_gpu_from_uevent({{"PCI_ID", "8086:4680"}, {"PCI_CLASS", "30000"}, {"PCI_SLOT_NAME", "0000:00:02.0"}}));
    EXPECT_FALSE(gpupart::nvidia_gpu_from_uevent({{"PCI_ID", "10DE:2335"}, {"PCI_SLOT_NAME", "0000:04:00.0"}}));
    EXPECT_FALSE(gpupart::nvidia_gpu_from_uevent({{"PCI_ID", "10DE2335"}, {"PCI_CLASS", "30200"}, {"PCI_SLOT_NAME", "x"}}));
}

TEST(UdevFilter, DeviceMinorFromTheDriversInformationFile) {
    const std::string information = "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 12\nGPU UUID: \t GPU-1234\n"
                                    "Video BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\n"
                                    "DMA Mask: \t 0xfffffffffffff\nBus Location: \t 0000:04:00.0\nDevice Minor: \t 3\n";
    EXPECT_EQ(gpupart::parse_nvidia_device_minor(information), 3);
    EXPECT_FALSE(gpupart::parse_nvidia_device_minor("Model: x\n").has_value());
    EXPECT_FALSE(gpupart::parse_nvidia_device_minor("").has_value());
}

// This machine's real sysfs. CI has no NVIDIA GPU: an empty list and an absent status that says so.
TEST(UdevSource, EnumeratesThisMachinesPciDevices) {
    const gpupart::UdevFacts facts = gpupart::read_udev();
    ASSERT_NE(facts.status.state, SourceState::failed) << facts.status.detail;
    EXPECT_EQ(facts.status.source, gpupart::Source::udev);
    EXPECT_EQ(facts.gpus.size(), gpupart::find_nvidia_gpus().size()) << "libudev and the sysfs walk must agree";
    if (!facts.gpus.empty()) GTEST_SKIP() << "this machine has an NVIDIA GPU: " << facts.status.detail;
    EXPECT_EQ(facts.status.state, SourceState::absent);
    EXPECT_EQ(facts.status.detail.rfind("no NVIDIA GPU (vendor 0x10de, display class) among ", 0), 0u) << facts.status.detail;
}

TEST(UdevSource, MonitorOpensAndHasNoGpuEventsPending) {
    gpupart::UdevMonitorOpen open = gpupart::open_udev_monitor();
    if (open.status.state != SourceState::ok) GTEST_SKIP() << open.status.detail;
    ASSERT_NE(open.monitor, nullptr);
    pollfd wait_for{open.monitor->fd(), POLLIN, 0};
    ASSERT_GE(wait_for.fd, 0);
    EXPECT_GE(::poll(&wait_for, 1, 0), 0);
    EXPECT_TRUE(open.monitor->drain().empty()) << "no GPU was plugged in during the test";
}
