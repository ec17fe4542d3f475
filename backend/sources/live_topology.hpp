#pragma once
// This machine's GPUs as they are now: every NVIDIA GPU sysfs lists (in PCI order, as nvidia-smi
// numbers them), each filled by the live sources, with one SourceStatus per source saying what it
// gave or why not: the RM controls (floorplan, SM order, engines, copy engines, PIDs), the cached probe
// (mask bits, joined with the RM SM order), NVML (name, UUID, process memory), libudev, nvdebug, MMIO.
#include <string>
#include <vector>

#include "model/gpu.hpp"
#include "sources/source_status.hpp"

namespace gpupart {

// Where the machine is read from; tests point them at constructed trees.
struct MachineRoots {
    std::string sysfs = "/sys";
    std::string dev = "/dev";
    std::string proc = "/proc";  // nvdebug's /proc/gpuN and the driver's /proc/driver/nvidia
    std::string nvml_library = "libnvidia-ml.so.1";
};

struct LiveTopology {
    Snapshot snapshot;                               // one Gpu per NVIDIA GPU, gpus[i].index == i
    std::vector<std::vector<SourceStatus>> sources;  // sources[i]: what each source said about GPU i
};

LiveTopology read_live_topology(const MachineRoots& roots = {});

}  // namespace gpupart
