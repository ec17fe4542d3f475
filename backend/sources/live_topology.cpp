#include "sources/live_topology.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

#include <unistd.h>

#include <fmt/format.h>

#include "platform/gpu_presence.hpp"
#include "platform/process_identity.hpp"
#include "sources/mmio_image.hpp"
#include "sources/nvdebug_reader.hpp"
#include "sources/nvml_model.hpp"
#include "sources/probe_cache.hpp"
#include "sources/probe_model.hpp"
#include "sources/rm_device_transport.hpp"
#include "sources/rm_gpu_builder.hpp"
#include "sources/rm_reader.hpp"
#include "sources/udev_source.hpp"

namespace gpupart {
namespace {

std::string now_utc() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

// A GPU sysfs lists, before any driver source has said anything: every fact unknown until one does.
Gpu gpu_from_sysfs(int index, const PciGpu& pci) {
    Gpu gpu;
    gpu.index = index;
    const Provenance sysfs{Source::udev, fmt::format("sysfs: PCI device {} (device id {})", pci.bus_id, pci.device_id)};
    gpu.pci_bus_id = known_fact(pci.bus_id, sysfs);
    const Provenance none{Source::inferred, "no live source"};
    const std::string why = "no live source gave it (see `gpupart gpus`)";
    for (auto* fact : {&gpu.name, &gpu.uuid, &gpu.architecture, &gpu.compute_capability, &gpu.driver_version, &gpu.cuda_version})
        *fact = unknown_fact<std::string>(why, none);
    gpu.sm_count = unknown_fact<int>(why, none);
    gpu.descriptor_version = unknown_fact<int>(why, none);
    gpu.mig_enabled = unknown_fact<bool>(why, none);
    gpu.copy_engines.pce_count = unknown_fact<int>(why, none);
    for (auto* fact : {&gpu.fifo.max_channel_groups, &gpu.fifo.max_channels_per_group, &gpu.fifo.channel_groups_in_use})
        *fact = unknown_fact<int>(why, none);
    return gpu;
}

// Who the processes the driver listed are, from /proc (empty where /proc hides them).
void describe_processes(Gpu& gpu) {
    for (Process& process : gpu.processes) {
        process.start_time = process_start_time(process.pid);
        if (const auto uid = process_uid(process.pid)) process.uid = static_cast<int>(*uid);
        if (const std::string command = process_command(process.pid); !command.empty()) process.command = command;
    }
}

SourceStatus nvml_status(const NvmlFacts& nvml, const NvmlDevice* device, const std::string& bus_id) {
    if (nvml.status.state != SourceState::ok) return nvml.status;
    if (!device) return SourceStatus{Source::nvml, SourceState::failed, fmt::format("NVML lists no GPU at {}", bus_id)};
    return SourceStatus{Source::nvml, SourceState::ok,
                        fmt::format("NVML device {}: {}{}", device->index, device->name.known() ? *device->name.value : "(no name)",
                                    device->processes_unknown.empty() ? "" : "; processes: " + device->processes_unknown)};
}

SourceStatus udev_status(const UdevFacts& udev, const std::string& bus_id) {
    if (udev.status.state != SourceState::ok) return udev.status;
    for (const UdevGpu& gpu : udev.gpus)
        if (gpu.bus_id == bus_id)
            return SourceStatus{Source::udev, SourceState::ok,
                                fmt::format("{}: driver {}, nodes {}", bus_id, gpu.driver.empty() ? "none bound" : gpu.driver,
                                            gpu.device_nodes.empty() ? std::string("none") : fmt::format("{}", fmt::join(gpu.device_nodes, " ")))};
    return SourceStatus{Source::udev, SourceState::failed, fmt::format("libudev lists no NVIDIA GPU at {}", bus_id)};
}

// The probe's mask bits for this GPU, from the cache `gpupart probe` writes (per GPU UUID and driver).
SourceStatus add_cached_probe(const std::vector<SmOrderEntry>& sm_order, Gpu& gpu) {
    if (!gpu.uuid.known() || !gpu.driver_version.known())
        return SourceStatus{Source::probe, SourceState::absent,
                            fmt::format("a cached probe is found by GPU UUID and driver version, and the {} is not known",
                                        gpu.uuid.known() ? "driver version" : "UUID (NVML gives it)")};
    const CachedProbe cached = load_cached_probe(*gpu.uuid.value, *gpu.driver_version.value);
    if (!cached.report) return cached.status;
    return apply_probe(*cached.report, sm_order, cached.path, gpu);
}

// Whether BAR0 can be mapped, without reading a register: the live view draws nothing from it (the RM
// controls give the same facts), and `gpupart source mmio` reads it where a user asks.
SourceStatus mmio_status(const std::string& bus_id, const std::string& sysfs_root) {
    const Bar0Open bar0 = open_bar0(bus_id, sysfs_root);
    if (!bar0.registers) return bar0.status;
    return SourceStatus{Source::mmio, SourceState::ok,
                        fmt::format("BAR0 of {} can be mapped; not read for this view (`gpupart source mmio` reads it)", bus_id)};
}

// What RM gave every GPU a partition command needs, so that NVML need not be started.
bool rm_suffices(const std::vector<RmReadResult>& reads) {
    return std::all_of(reads.begin(), reads.end(), [](const RmReadResult& rm) {
        return rm.facts && rm.facts->uuid.ok() && rm.facts->pids.ok();
    });
}

}  // namespace

LiveTopology read_live_topology(const MachineRoots& roots, LiveRead what) {
    return read_live_topology(roots, what, [&roots] { return std::make_unique<RmDeviceTransport>(roots.dev); });
}

LiveTopology read_live_topology(const MachineRoots& roots, LiveRead what, const RmTransportMaker& make_transport) {
    LiveTopology live;
    live.snapshot.captured = now_utc();
    live.snapshot.description = "this machine's NVIDIA GPUs, read live by gpupart";
    const bool as_root = ::geteuid() == 0;
    const auto pci_gpus = find_nvidia_gpus(roots.sysfs);
    if (pci_gpus.empty()) return live;
    std::vector<RmReadResult> rm_reads;
    for (const PciGpu& pci : pci_gpus) {
        const std::unique_ptr<RmTransport> transport = make_transport();
        rm_reads.push_back(read_rm_facts(*transport, pci.bus_id, as_root));
    }
    NvmlFacts nvml;
    if (what == LiveRead::full || !rm_suffices(rm_reads))
        nvml = read_nvml(roots.nvml_library);
    else
        nvml.status = SourceStatus{Source::nvml, SourceState::not_read,
                                   "not needed: the RM controls gave every GPU's UUID and processes"};
    const UdevFacts udev = read_udev(roots.proc);
    for (std::size_t i = 0; i < pci_gpus.size(); ++i) {
        const std::string& bus_id = pci_gpus[i].bus_id;
        Gpu gpu = gpu_from_sysfs(static_cast<int>(i), pci_gpus[i]);
        std::vector<SourceStatus> sources;

        const RmReadResult& rm = rm_reads[i];
        sources.push_back(rm.status);
        std::vector<SmOrderEntry> sm_order;
        if (rm.facts) {
            add_rm_facts(*rm.facts, static_cast<int>(::getpid()), gpu);
            if (rm.facts->sm_order.ok()) sm_order = rm.facts->sm_order.value->entries;
        }
        const NvmlDevice* device = nvml_device_at(nvml, bus_id);
        if (device) add_nvml_facts(*device, gpu);
        describe_processes(gpu);
        sources.push_back(add_cached_probe(sm_order, gpu));
        sources.push_back(nvml_status(nvml, device, bus_id));  // NVML's own status where it was not read
        sources.push_back(udev_status(udev, bus_id));
        sources.push_back(read_nvdebug(roots.proc, static_cast<int>(i)).status);
        sources.push_back(mmio_status(bus_id, roots.sysfs));

        live.snapshot.gpus.push_back(std::move(gpu));
        live.sources.push_back(std::move(sources));
    }
    return live;
}

}  // namespace gpupart
