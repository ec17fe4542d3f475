#pragma once
// NVIDIA MPS through its control program (nvidia-cuda-mps-control): start, stop, status. Without MPS
// the contexts of different processes time-slice the GPU (Bakita & Anderson, RTAS 2024, rule R4), so TPC partitions only
// separate processes that run under one MPS server (docs/mps-fault-domain.md).
#include <map>
#include <string>
#include <vector>

namespace gpupart {

struct MpsState {
    std::string pipe_directory;     // $CUDA_MPS_PIPE_DIRECTORY or /tmp/nvidia-mps
    bool control_running = false;   // the control daemon's socket answers
    std::vector<int> server_pids;   // get_server_list
    bool static_partitioning = false;  // the control daemon runs with -S (MPS static SM partitioning)
    std::string detail;             // one line: what was found, or why not
};

std::string mps_pipe_directory();
MpsState mps_status();
// The daemon whose pipe directory is `pipe_directory` (e.g. a per-GPU unit's, platform/mps_units.hpp).
MpsState mps_status(const std::string& pipe_directory);
// Whether an nvidia-cuda-mps-control daemon under `proc_root` was started with -S / --static-partitioning.
bool mps_static_partitioning_active(const std::string& proc_root = "/proc");
// The client PIDs of each MPS server (`get_client_list`), by server PID; empty when MPS is not running.
// NVML attributes MPS clients' GPU work to the server, so this is the only way to see them. Throws
// UserError when the daemon answers with an error. Asks the daemon of state.pipe_directory.
std::map<int, std::vector<int>> mps_clients(const MpsState& state);
// Both throw UserError with one line (binary missing, daemon refused, timeout).
std::string mps_start();
std::string mps_stop();

// Runs argv with `input` on stdin, returns stdout and stderr together; throws UserError after `timeout_ms`
// (the child is killed) or if it cannot start.
struct CommandResult {
    int exit_code = -1;
    std::string output;
};
CommandResult run_command(const std::vector<std::string>& argv, const std::string& input, int timeout_ms);
// The same with `environment` ("NAME=value" entries) as the child's whole environment.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& input, int timeout_ms,
                          const std::vector<std::string>& environment);

}  // namespace gpupart
