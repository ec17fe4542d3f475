#pragma once
// Which NVIDIA GPUs this machine has, through libudev: each GPU's PCI address, device id, driver and
// /dev nodes, and a monitor that reports GPUs added and removed (hotplug, driver bind/unbind). The
// nvidia driver's own nodes (/dev/nvidiaN) are not udev devices: their minor number comes from the
// driver's /proc/driver/nvidia/gpus/<bus id>/information; the DRM nodes (/dev/dri/cardN, renderDN)
// are udev's.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/provenance.hpp"
#include "sources/source_status.hpp"

struct udev;
struct udev_monitor;

namespace gpupart {

struct UdevGpu {
    std::string bus_id;     // "0000:04:00.0"
    std::string device_id;  // "0x2335"
    std::string pci_class;  // "0x030200"
    std::string driver;     // "nvidia", "nouveau", "" (no driver bound)
    std::vector<std::string> device_nodes;  // "/dev/nvidia0", "/dev/dri/card1", "/dev/dri/renderD128"
    Provenance from;
};

struct UdevFacts {
    SourceStatus status;  // ok, absent (no NVIDIA GPU among the PCI devices), failed (libudev could not enumerate)
    std::vector<UdevGpu> gpus;  // by bus id
};

// The "Device Minor:" of the nvidia driver's /proc/driver/nvidia/gpus/<bus id>/information: N of /dev/nvidiaN.
std::optional<int> parse_nvidia_device_minor(const std::string& information);

// `proc_root` is where /proc/driver/nvidia lives ("/proc"; tests point it elsewhere).
UdevFacts read_udev(const std::string& proc_root = "/proc");

enum class UdevAction { added, removed, changed };

struct UdevEvent {
    UdevAction action = UdevAction::changed;
    UdevGpu gpu;  // from the event's own properties; removal events have no driver or nodes
};

// A udev monitor for PCI devices: poll fd() for readability, then take the NVIDIA GPU events with
// drain() (other devices' events are read and dropped).
class UdevMonitor {
public:
    ~UdevMonitor();
    UdevMonitor(const UdevMonitor&) = delete;
    UdevMonitor& operator=(const UdevMonitor&) = delete;

    int fd() const;
    std::vector<UdevEvent> drain();

private:
    friend struct UdevMonitorOpen open_udev_monitor();
    UdevMonitor(struct ::udev* context, struct ::udev_monitor* monitor) : udev_(context), monitor_(monitor) {}
    struct ::udev* udev_;
    struct ::udev_monitor* monitor_;
};

struct UdevMonitorOpen {
    SourceStatus status;  // ok, or failed with libudev's reason (no netlink in this container, ...)
    std::unique_ptr<UdevMonitor> monitor;
};
UdevMonitorOpen open_udev_monitor();

}  // namespace gpupart
