#pragma once
// This machine's GPUs as they are now: every NVIDIA GPU sysfs lists (in PCI order, as nvidia-smi
// numbers them), each filled by the live sources, with one SourceStatus per source saying what it
// gave or why not: the RM controls (UUID, name, floorplan, SM order, engines, copy engines, PIDs), the
// cached probe (mask bits, joined with the RM SM order), NVML (SM count, process memory, and the UUID and
// name where the RM controls do not give them), libudev, nvdebug, MMIO.
#include <functional>
#include <memory>
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

// What a live read is for. `partition` (starting a confined command): each GPU's identity, TPC map and
// processes, which the RM controls give; NVML, whose start alone costs a command about 25 ms on an H200
// (docs/launch-path.md), is then read only where they did not give every GPU's UUID and process list.
enum class LiveRead { full, partition };

LiveTopology read_live_topology(const MachineRoots& roots = {}, LiveRead what = LiveRead::full);

// The same read with the RM controls reached through a transport `make_transport` gives for each GPU (a
// test's replay of recorded replies; the one above opens roots.dev's device nodes).
class RmTransport;  // sources/rm_transport.hpp: the sources layer's own
using RmTransportMaker = std::function<std::unique_ptr<RmTransport>()>;
LiveTopology read_live_topology(const MachineRoots& roots, LiveRead what, const RmTransportMaker& make_transport);

}  // namespace gpupart
