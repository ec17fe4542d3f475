#pragma once
// Runs gpupart-probe as a child process under the gpupart shim, with a deadline, and reads its report.
//
// Why a child under the shim: the probe sets each kernel's TPC mask through the shim exactly as a
// partitioned process gets it (no second copy of the descriptor layouts), from a private registry
// directory that nothing else sees; and a GPU that misbehaves can only cost the child, which is killed
// at the deadline. The child runs without MPS (a private, empty pipe directory), because MPS
// virtualises %smid, and with CUDA_DEVICE_ORDER=PCI_BUS_ID so device N is nvidia-smi's GPU N.
#include <optional>
#include <string>

#include "sources/probe_report.hpp"
#include "sources/source_status.hpp"

namespace gpupart {

struct ProbeCommand {
    std::string program;     // path of gpupart-probe
    std::string shim;        // path of libgpupart-shim.so
    int gpu = 0;             // CUDA device ordinal in PCI bus order
    int deadline_ms = 20000;  // the whole child, from start to exit
};

// The probe's exit codes.
enum ProbeExit { probe_ok = 0, probe_failed = 1, probe_no_libcuda = 2, probe_unsupported = 3 };

struct ProbeRun {
    SourceStatus status;                // ok, absent (no libcuda), unsupported (descriptor/callback), failed
    std::optional<ProbeReport> report;  // when status is ok
    std::string output;                 // what the child printed, for --verbose and bug reports
    double wall_ms = 0;                 // from spawning the child to its exit
};

ProbeRun run_probe(const ProbeCommand& command);

}  // namespace gpupart
