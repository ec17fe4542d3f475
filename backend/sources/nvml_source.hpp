#pragma once
// What NVML says about this machine's GPUs: identity (name, UUID, PCI bus id), SMs where NVML gives
// them, memory, utilisation, clocks, MIG mode and the compute processes with their memory; and, through
// nvidia-cuda-mps-control (platform/mps_control), the MPS server and its clients, because NVML
// attributes an MPS client's GPU work to the server process. Every field is a Fact: a value NVML
// refused or lacks carries the reason, never a made-up 0.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/provenance.hpp"
#include "platform/mps_control.hpp"
#include "sources/source_status.hpp"

namespace gpupart {

struct NvmlProcess {
    int pid = 0;
    std::string name;                           // NVML's process name, else /proc/PID/comm, else ""
    Fact<std::uint64_t> used_memory_bytes;
    bool mps_server = false;                    // an nvidia-cuda-mps-server: its clients' work shows as its own
    std::vector<int> mps_clients;               // when mps_server
};

struct NvmlDevice {
    int index = 0;
    Fact<std::string> name;
    Fact<std::string> uuid;
    Fact<std::string> pci_bus_id;  // "00000000:04:00.0", as NVML writes it
    Fact<int> sm_count;
    Fact<std::uint64_t> memory_total_bytes;
    Fact<std::uint64_t> memory_used_bytes;
    Fact<int> gpu_utilization_percent;
    Fact<int> memory_utilization_percent;
    Fact<int> sm_clock_mhz;
    Fact<int> max_sm_clock_mhz;
    Fact<int> memory_clock_mhz;
    Fact<bool> mig_enabled;
    Fact<bool> mig_pending;  // the mode after the next GPU reset
    std::vector<NvmlProcess> processes;
    std::string processes_unknown;  // why the process list could not be read; "" when it was
};

struct MpsFacts {
    MpsState state;
    std::map<int, std::vector<int>> clients;  // server pid -> client pids
    std::string clients_unknown;              // why the client lists could not be read; "" when they were
};

struct NvmlFacts {
    SourceStatus status;  // absent (no libnvidia-ml / no driver), refused, unsupported (not NVML), failed, ok
    Fact<std::string> driver_version;
    std::vector<NvmlDevice> devices;
};

// Reads every device; `library` is the file to dlopen (tests name others).
NvmlFacts read_nvml(const std::string& library = "libnvidia-ml.so.1");

// MPS through its control program: state (static SM partitioning included) and each server's clients.
MpsFacts read_mps();

// Marks the MPS server processes in `nvml` and gives them their clients.
void attach_mps_clients(NvmlFacts& nvml, const MpsFacts& mps);

}  // namespace gpupart
