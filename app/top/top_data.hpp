#pragma once
// What one frame of `gpupart top` shows, gathered once per refresh: the GPU, where its map comes from,
// the partitioned processes with their counters and launch rates, and the controller's findings.
// Plain values, so the layout is a pure function of them (tested without a terminal or a registry).
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/finding.hpp"
#include "controller/system_state.hpp"
#include "model/gpu.hpp"
#include "model/launch_rates.hpp"
#include "registry/registry.hpp"
#include "smlp/smlp_file.hpp"
#include "platform/process_usage.hpp"
#include "sources/gpu_meters.hpp"
#include "controller/owner_letters.hpp"

namespace gpupart::top {

// One line of the masks a program chose: "global 0-7 → 0-7", "stream 0x7f.. 0-3 → 0-3 · 120 launches".
struct TopAppLine {
    std::string text;
    bool outside_bound = false;  // no TPC inside the operator's mask: the launches run on the operator's
};

// Strings that came from other processes (user, command, findings) are escaped with one_line here,
// once, so every section, the search and the batch output show the same safe text.
struct TopProcess {
    int pid = 0;
    std::uint64_t start_time = 0;
    std::string user;
    std::string command;
    bool partitioned = false;  // else it may run on every TPC
    TpcMask mask;              // requested
    std::string applied;       // what the shim applies: a TPC list, "all", "-" (no launch yet), "(next launch)"
    std::string shim;          // the shim's state in a word: "active", "waiting", "refused", ...
    std::string shim_detail;   // the same as `gpupart list` says it
    std::uint64_t launches = 0;
    std::optional<double> launches_per_second;  // empty until two samples exist
    std::optional<std::uint64_t> memory_bytes;  // GPU memory from NVML; empty: no source tells
    std::string scaling;                        // its saved curve's class: "compute 1.53x" (top_scaling.hpp); "" none
    std::optional<int> gpu_percent;             // NVML's latest per-process SM sample; empty: no source tells
    std::optional<double> cpu_percent;          // of one core, from /proc (ProcessUsageSampler)
    std::optional<std::uint64_t> rss_bytes;     // host memory resident
    std::uint64_t generation = 0;
    // The masks the program chose itself through libgpupart.so (registry/app_masks.hpp), under `mask`.
    bool app_masks = false;
    std::string app_summary;              // "global 0-7 · 2 stream masks · 1200 launches chose their mask"
    std::vector<TopAppLine> app_lines;    // the global choice, then each stream's (a problem line first)
    std::uint64_t app_outside = 0;        // launches whose choice had no TPC inside the operator's mask
    bool simulated = false;  // a gpupart-demo-worker
    char letter = '?';       // its owner letter in the floorplan, kept for its whole life (OwnerLetters)
    int colour = 0;          // owner colour slot, the letter's order modulo the palette
};

// Where the TPC map comes from and whether the view may change partitions with it.
struct TopSource {
    std::string origin;      // "builtin:h200" or a snapshot path
    bool builtin = false;
    std::string why;         // one line: why this map is shown
    std::string read_only;   // empty: partitions may be changed; else why not (one line)
    int gpu_count = 1;
};

struct TopData {
    Gpu gpu;
    TopSource source;
    std::string registry_dir;
    bool mps_running = false;
    std::vector<TopProcess> processes;  // pid order
    int unreadable_slots = 0;           // slots that could not be read (another layout, permission)
    std::string unreadable_problem;     // the first one's file and why, escaped (one line)
    std::string registry_problem;       // empty, or why the registry cannot be seen (removed while top ran)
    std::vector<Finding> findings;      // the controller's findings about the partitions as they are
    std::string clock;                  // "23:01:02", local time of the sample
    std::vector<ExitedOwner> exited;    // processes shown at the last sample and gone now (their letters are free)
    std::optional<GpuMeters> meters;    // this GPU's NVML meters now; empty on a recording or without NVML
    std::string meters_problem;         // why there are none (one line)
    // SMLP components of the registry (every GPU's; labels escaped), for the components view (x).
    std::vector<SmlpEntry> smlp;
    std::string smlp_problem;           // why they could not be listed (one line)
    std::uint64_t smlp_now_ns = 0;      // when they were read (CLOCK_REALTIME): waiting and holding times
};

// Puts the registry's SMLP components into `data`, their labels escaped (one_line) once.
void add_smlp(TopData& data, std::vector<SmlpEntry> entries, std::uint64_t now_ns);

// Puts `meters` (or why there are none) into `data`, and each process's GPU memory where NVML gives one.
void add_meters(TopData& data, const std::optional<GpuMeters>& meters, const std::string& problem);
// Puts each process's CPU% and RSS (from /proc) into `data`.
void add_usage(TopData& data, ProcessUsageSampler& usage, std::chrono::steady_clock::time_point now);

// Samples closer than this to the previous one (a key press refreshes too) keep the last rate.
inline constexpr std::chrono::milliseconds kTopRateWindow{250};

// One frame's data from the controller's state alone (refreshed by the caller: one registry read).
// `letters` keeps each process's letter across samples (a fresh one gives letters in pid order).
TopData make_top_data(const SystemState& state, const TopSource& source, const std::string& registry_dir,
                      LaunchRates& rates, OwnerLetters& letters, std::chrono::steady_clock::time_point now);
TopData make_top_data(const SystemState& state, const TopSource& source,
                      const std::string& registry_dir, LaunchRates& rates, std::chrono::steady_clock::time_point now);

inline constexpr int kOwnerColours = 6;

}  // namespace gpupart::top
