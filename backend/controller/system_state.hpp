#pragma once
// Everything the controller's rules look at, gathered once: the GPU's topology, the live partitioned
// processes, MPS, and who is asking. Plain data, so every rule is a pure function tested without
// processes (the gathering itself is tested with real ones).
#include <optional>
#include <string>
#include <vector>

#include "model/gpu.hpp"
#include "platform/mps_log.hpp"
#include "registry/graph_status.hpp"
#include "registry/registry.hpp"

namespace gpupart {

struct ProcessState {
    int pid = 0;
    std::uint64_t start_time = 0;
    unsigned uid = 0;
    std::string command;
    bool partitioned = false;  // has a mask (else: may use every TPC)
    TpcMask mask;              // requested (control block)
    std::uint64_t generation = 0;
    Liveness liveness = Liveness::alive;
    GraphStatus graphs;        // what its CUDA graph execs carry (the shim's counts)
};

struct SystemState {
    Gpu gpu;
    std::vector<ProcessState> processes;  // registered, alive
    bool mps_running = false;
    bool mps_static_partitioning = false;
    std::vector<MpsFatalError> mps_fatal_errors;  // of the running MPS server, oldest first
    std::string mps_log_directory;                // where they were looked for
    std::string mps_log_problem;                  // why the MPS logs could not be read; empty when they were
    unsigned caller_uid = 0;
    bool caller_admin = false;  // root, or in the registry's admin group
};

// Reads the registry and MPS. `admin_group` names the admin group ("gpupart").
SystemState gather_state(const Registry& registry, const Gpu& gpu, const std::string& admin_group = "gpupart");

const ProcessState* find_process(const SystemState& state, int pid);
bool in_group(const std::string& group);  // the calling process is a member (primary or supplementary)

}  // namespace gpupart
