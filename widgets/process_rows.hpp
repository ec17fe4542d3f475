#pragma once
// The rows of the process table, computed from the controller's state (its per-GPU process view): a pure
// function apart from any model or view, so what the table says is tested without a window. Launch
// rates come from the difference of the shim's counters between two refreshes.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <QColor>
#include <QString>

#include "controller/system_state.hpp"
#include "model/launch_rates.hpp"

namespace gpupart::widgets {

struct ProcessRow {
    int pid = 0;
    std::uint64_t start_time = 0;
    QString user;
    QString command;
    int gpu = 0;
    int other_gpus = 0;        // other GPUs the process has a mask for or a context on
    QString gpus_detail;       // tooltip: every GPU of the process by UUID
    bool partitioned = false;
    TpcMask tpcs;             // allowed TPCs (all real TPCs when not partitioned)
    int tpc_count = 0;
    int sm_count = 0;
    double share = 0;          // of the GPU's real TPCs
    std::optional<double> launches_per_second;  // empty until two refreshes saw the process
    std::optional<std::uint64_t> gpu_memory_bytes;
    std::optional<int> gpu_percent;           // NVML's latest per-process sample (gpu_process_percent)
    std::optional<double> cpu_percent;        // of one core over the last sample period (/proc, as htop)
    std::optional<std::uint64_t> rss_bytes;   // resident host memory (/proc)
    QString mps;               // "no MPS", "server up", ...
    QString shim;              // "active", "pending: next launch", "unsupported descriptor 0x41", ...
    bool shim_problem = false; // the shim cannot apply masks in this process: shown in red
    QString shim_detail;       // tooltip: start rule, descriptor version, counters
    // The program chooses its own masks through libgpupart.so (registry/app_masks.hpp): marked in TPCs.
    bool app_masks = false;
    QString masks_detail;      // tooltip: the operator's mask, the program's masks and what each runs on, the counters
    QColor color;
    QChar letter = '?';        // its letter in the floorplan and in `gpupart top` (owner_colors.hpp)
};

// The app's rates are measured over at least this (LaunchRates keeps the last rate in between).
inline constexpr std::chrono::milliseconds kRateWindow{500};

// `rates` is updated with this refresh's counters and forgets the processes that are gone.
// Every row comes from the controller's state alone (one registry read per refresh).
std::vector<ProcessRow> process_rows(const SystemState& state, LaunchRates& rates, LaunchRates::Clock::time_point now);

}  // namespace gpupart::widgets
