#pragma once
// Live meters of one GPU, read from NVML at every refresh of `gpupart top` and the app, as nvtop shows them:
// utilisation, memory, power, SM clock, temperature, and the GPU memory and utilisation of each compute process. NVML is
// loaded once (dlopen) and initialised once for the reader's life; each read is a handful of NVML calls, no
// process list of MPS and no probe. A value NVML lacks or refuses stays empty (a view shows "-"), never 0.
// Under MPS, NVML on driver 580 lists the clients with their memory (measured on an H100); where a driver
// charges them to the MPS server instead, they are not in `process_memory` and the views say so. Per-process
// utilisation under MPS is whatever NVML attributes (see docs/metrics.md); the registry's launch rates are
// gpupart's own measure of each process's activity.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sources/nvml_library.hpp"

namespace gpupart {

// One process's share of the GPU's time in NVML's latest per-process sample (nvtop's GPU% column).
struct ProcessUtilization {
    int sm_percent = 0;      // of the sample period, a kernel of this process was running
    int memory_percent = 0;  // ... its memory reads or writes were
};

struct GpuMeters {
    std::string uuid;
    std::optional<int> gpu_percent;      // nvmlDeviceGetUtilizationRates: time a kernel ran, last sample period
    std::optional<int> memory_percent;   // ... time memory was read or written
    std::optional<std::uint64_t> memory_used_bytes;
    std::optional<std::uint64_t> memory_total_bytes;
    std::optional<double> power_watts;
    std::optional<double> power_limit_watts;
    std::optional<int> sm_clock_mhz;
    std::optional<int> max_sm_clock_mhz;
    std::optional<int> temperature_c;
    std::map<int, std::uint64_t> process_memory;  // pid -> bytes, compute processes NVML lists with a figure
    // pid -> its latest sample of the last kProcessSampleWindow. NVML samples a process only while it runs
    // work, so a compute process without a sample ran none (0%) when process_utilization_read is true.
    std::map<int, ProcessUtilization> process_utilization;
    bool process_utilization_read = false;  // false: this NVML or GPU has no per-process samples ("-")
};

// How far back a per-process sample still counts: NVML keeps about a second of samples per process, and
// views refresh every 0.25-10 s; a window of 3 s keeps a steady process from flickering to 0 between them.
inline constexpr long long kProcessSampleWindowUs = 3'000'000;

// The NVML the views load: $GPUPART_NVML where set (another file, as GPUPART_SHIM names another shim; the
// tests name a stand-in), else libnvidia-ml.so.1.
std::string nvml_library_file();

class GpuMeterReader {
public:
    explicit GpuMeterReader(std::string library = nvml_library_file());
    GpuMeterReader(const GpuMeterReader&) = delete;
    GpuMeterReader& operator=(const GpuMeterReader&) = delete;
    ~GpuMeterReader();

    // The meters of the GPU with `uuid` now, or nullopt with problem() saying why (no NVML, no such GPU).
    std::optional<GpuMeters> read(const std::string& uuid);
    const std::string& problem() const { return problem_; }

private:
    bool ready();  // loads and initialises NVML once; false (with problem_) when it cannot
    std::string file_;
    std::optional<nvml::Library> library_;
    bool initialised_ = false;
    bool tried_ = false;
    std::string problem_;
};

// "GPU 87% · mem 31.2/80.0 GiB · 412/700 W · SM 1755/1980 MHz · 61°C": the parts a view shows, most
// important first, each whole; parts without a value are left out.
std::vector<std::string> meter_parts(const GpuMeters& meters);

}  // namespace gpupart
