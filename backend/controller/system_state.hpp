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

// A slot that could not be read (another layout, permission, garbage): the TPCs its process uses are
// unknown, so no TPC can be called idle or free with certainty while it is there.
struct UnreadableSlot {
    std::string path;
    std::string problem;    // one line, from the registry
    std::optional<int> pid; // from the file name <pid>-<start>.slot; nullopt when that is not one
};

struct SystemState {
    Gpu gpu;
    std::vector<ProcessState> processes;  // registered, alive
    std::vector<UnreadableSlot> unreadable;  // those of live processes, or of a process the name does not tell
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

// Fills state's mps_fatal_errors (of the servers `server_pids`), mps_log_directory and mps_log_problem from
// the MPS logs in `log_directory`: what gather_state does when MPS runs, for front ends that read no other
// state (`list`).
void gather_mps_log(SystemState& state, const std::string& log_directory, const std::vector<int>& server_pids);

const ProcessState* find_process(const SystemState& state, int pid);
bool in_group(const std::string& group);  // the calling process is a member (primary or supplementary)

}  // namespace gpupart
