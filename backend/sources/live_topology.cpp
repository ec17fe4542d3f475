#include "sources/live_topology.hpp"

#include <chrono>
#include <ctime>

#include <unistd.h>

#include <fmt/format.h>

#include "platform/gpu_presence.hpp"
#include "registry/process_identity.hpp"
#include "sources/rm_device_transport.hpp"
#include "sources/rm_gpu_builder.hpp"
#include "sources/rm_reader.hpp"

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
        process.command = process_command(process.pid);
    }
}

}  // namespace

LiveTopology read_live_topology(const MachineRoots& roots) {
    LiveTopology live;
    live.snapshot.captured = now_utc();
    live.snapshot.description = "this machine's NVIDIA GPUs, read live by gpupart";
    const bool as_root = ::geteuid() == 0;
    const auto pci_gpus = find_nvidia_gpus(roots.sysfs);
    for (std::size_t i = 0; i < pci_gpus.size(); ++i) {
        Gpu gpu = gpu_from_sysfs(static_cast<int>(i), pci_gpus[i]);
        std::vector<SourceStatus> sources;
        RmDeviceTransport transport(roots.dev);
        const RmReadResult rm = read_rm_facts(transport, pci_gpus[i].bus_id, as_root);
        sources.push_back(rm.status);
        if (rm.facts) {
            add_rm_facts(*rm.facts, static_cast<int>(::getpid()), gpu);
            describe_processes(gpu);
        }
        live.snapshot.gpus.push_back(std::move(gpu));
        live.sources.push_back(std::move(sources));
    }
    return live;
}

}  // namespace gpupart
