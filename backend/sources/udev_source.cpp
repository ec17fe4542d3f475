#include "sources/udev_source.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <libudev.h>

#include <fmt/format.h>

#include "platform/udev_filter.hpp"

namespace gpupart {
namespace {

std::string text_or_empty(const char* text) { return text != nullptr ? text : ""; }

// sysfs values end with a newline when read by hand; libudev strips it. Both are accepted here.
std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

std::vector<std::string> drm_nodes(struct udev* context, struct udev_device* pci) {
    std::vector<std::string> nodes;
    struct udev_enumerate* children = udev_enumerate_new(context);
    if (children == nullptr) return nodes;
    udev_enumerate_add_match_parent(children, pci);
    udev_enumerate_add_match_subsystem(children, "drm");
    if (udev_enumerate_scan_devices(children) >= 0) {
        struct udev_list_entry* entry = nullptr;
        udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(children)) {
            struct udev_device* child = udev_device_new_from_syspath(context, udev_list_entry_get_name(entry));
            if (child == nullptr) continue;
            if (const char* node = udev_device_get_devnode(child); node != nullptr) nodes.emplace_back(node);
            udev_device_unref(child);
        }
    }
    udev_enumerate_unref(children);
    return nodes;
}

// What sysfs (through libudev) says about a PCI device that passed the filter.
UdevGpu describe(struct udev* context, struct udev_device* device, const std::string& proc_root) {
    UdevGpu gpu;
    gpu.bus_id = text_or_empty(udev_device_get_sysname(device));
    gpu.device_id = trimmed(text_or_empty(udev_device_get_sysattr_value(device, "device")));
    gpu.pci_class = trimmed(text_or_empty(udev_device_get_sysattr_value(device, "class")));
    gpu.driver = text_or_empty(udev_device_get_driver(device));
    std::ifstream information(fmt::format("{}/driver/nvidia/gpus/{}/information", proc_root, gpu.bus_id));
    std::ostringstream text;
    text << information.rdbuf();
    if (const auto minor = parse_nvidia_device_minor(text.str())) gpu.device_nodes.push_back(fmt::format("/dev/nvidia{}", *minor));
    for (std::string& node : drm_nodes(context, device)) gpu.device_nodes.push_back(std::move(node));
    gpu.from = Provenance{Source::udev, text_or_empty(udev_device_get_syspath(device))};
    return gpu;
}

SourceStatus as_udev(SourceState state, std::string detail) { return SourceStatus{Source::udev, state, std::move(detail)}; }

}  // namespace

std::optional<int> parse_nvidia_device_minor(const std::string& information) {
    static const std::regex minor_line(R"((^|\n)Device Minor:\s*(\d+)\s*(\n|$))");
    std::smatch m;
    if (!std::regex_search(information, m, minor_line)) return std::nullopt;
    return std::stoi(m[2]);
}

UdevFacts read_udev(const std::string& proc_root) {
    UdevFacts facts;
    struct udev* context = udev_new();
    if (context == nullptr) {
        facts.status = as_udev(SourceState::failed, fmt::format("libudev: udev_new failed: {}", std::strerror(errno)));
        return facts;
    }
    struct udev_enumerate* pci = udev_enumerate_new(context);
    int scanned = pci != nullptr ? udev_enumerate_add_match_subsystem(pci, "pci") : -ENOMEM;
    if (scanned >= 0) scanned = udev_enumerate_scan_devices(pci);
    if (scanned < 0) {
        facts.status = as_udev(SourceState::failed, fmt::format("libudev: cannot enumerate PCI devices: {}", std::strerror(-scanned)));
        if (pci != nullptr) udev_enumerate_unref(pci);
        udev_unref(context);
        return facts;
    }
    int devices = 0;
    struct udev_list_entry* entry = nullptr;
    udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(pci)) {
        struct udev_device* device = udev_device_new_from_syspath(context, udev_list_entry_get_name(entry));
        if (device == nullptr) continue;
        ++devices;
        const std::string vendor = trimmed(text_or_empty(udev_device_get_sysattr_value(device, "vendor")));
        const std::string pci_class = trimmed(text_or_empty(udev_device_get_sysattr_value(device, "class")));
        if (is_nvidia_gpu(vendor, pci_class)) facts.gpus.push_back(describe(context, device, proc_root));
        udev_device_unref(device);
    }
    udev_enumerate_unref(pci);
    udev_unref(context);
    std::sort(facts.gpus.begin(), facts.gpus.end(), [](const UdevGpu& a, const UdevGpu& b) { return a.bus_id < b.bus_id; });
    facts.status = facts.gpus.empty()
                       ? as_udev(SourceState::absent, fmt::format("no NVIDIA GPU (vendor 0x10de, display class) among {} PCI devices", devices))
                       : as_udev(SourceState::ok, fmt::format("{} NVIDIA GPU(s) among {} PCI devices", facts.gpus.size(), devices));
    return facts;
}

UdevMonitor::~UdevMonitor() {
    udev_monitor_unref(monitor_);
    udev_unref(udev_);
}

int UdevMonitor::fd() const { return udev_monitor_get_fd(monitor_); }

std::vector<UdevEvent> UdevMonitor::drain() {
    std::vector<UdevEvent> events;
    while (struct udev_device* device = udev_monitor_receive_device(monitor_)) {
        std::map<std::string, std::string> properties;
        struct udev_list_entry* entry = nullptr;
        udev_list_entry_foreach(entry, udev_device_get_properties_list_entry(device)) {
            properties.emplace(udev_list_entry_get_name(entry), text_or_empty(udev_list_entry_get_value(entry)));
        }
        if (const auto gpu = nvidia_gpu_from_uevent(properties)) {
            const std::string action = text_or_empty(udev_device_get_action(device));
            UdevEvent event;
            event.action = action == "add" ? UdevAction::added : action == "remove" ? UdevAction::removed : UdevAction::changed;
            if (event.action == UdevAction::removed) {
                event.gpu = UdevGpu{gpu->bus_id, gpu->device_id, gpu->pci_class, "", {}, {Source::udev, "udev event remove"}};
            } else {
                event.gpu = describe(udev_, device, "/proc");
                event.gpu.from.detail = fmt::format("udev event {} {}", action, event.gpu.from.detail);
            }
            events.push_back(std::move(event));
        }
        udev_device_unref(device);
    }
    return events;
}

UdevMonitorOpen open_udev_monitor() {
    UdevMonitorOpen open;
    struct udev* context = udev_new();
    struct udev_monitor* monitor = context != nullptr ? udev_monitor_new_from_netlink(context, "udev") : nullptr;
    const int error = errno;
    if (monitor == nullptr) {
        open.status = as_udev(SourceState::failed, fmt::format("libudev: cannot open a udev monitor: {}", std::strerror(error)));
        if (context != nullptr) udev_unref(context);
        return open;
    }
    int result = udev_monitor_filter_add_match_subsystem_devtype(monitor, "pci", nullptr);
    if (result >= 0) result = udev_monitor_enable_receiving(monitor);
    if (result < 0) {
        open.status = as_udev(SourceState::failed, fmt::format("libudev: cannot listen for PCI events: {}", std::strerror(-result)));
        udev_monitor_unref(monitor);
        udev_unref(context);
        return open;
    }
    open.monitor.reset(new UdevMonitor(context, monitor));
    open.status = as_udev(SourceState::ok, "listening for PCI add/remove events");
    return open;
}

}  // namespace gpupart
