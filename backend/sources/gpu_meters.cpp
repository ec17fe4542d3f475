#include "sources/gpu_meters.hpp"

#include <algorithm>
#include <cstddef>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace gpupart {

std::string nvml_library_file() {
    const char* named = std::getenv("GPUPART_NVML");
    return named != nullptr && *named != '\0' ? named : "libnvidia-ml.so.1";
}

namespace {

// NVML's sample time stamps are the CPU's wall clock in microseconds.
unsigned long long now_us() {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<unsigned long long>(now.tv_sec) * 1'000'000ull + static_cast<unsigned long long>(now.tv_nsec) / 1000ull;
}

// The latest sample of each process in the last kProcessSampleWindowUs. NVML answers NOT_FOUND when no
// process ran work in the window: a read with nothing running, not a failure.
void read_process_utilization(const nvml::Library& l, nvml::Device device, GpuMeters& m) {
    if (!l.process_utilization) return;
    const unsigned long long since = now_us() - static_cast<unsigned long long>(kProcessSampleWindowUs);
    for (int attempt = 0; attempt < 2; ++attempt) {  // the sample count may grow between the two calls
        unsigned n = 0;
        nvml::Return result = l.process_utilization(device, nullptr, &n, since);
        if (result == nvml::kNotFound || (result == nvml::kSuccess && n == 0)) {
            m.process_utilization_read = true;
            return;
        }
        if (result != nvml::kSuccess && result != nvml::kInsufficientSize) return;
        n += 16;
        std::vector<nvml::ProcessUtilizationSample> samples(n);
        result = l.process_utilization(device, samples.data(), &n, since);
        if (result == nvml::kInsufficientSize) continue;
        if (result == nvml::kNotFound) n = 0;
        else if (result != nvml::kSuccess) return;
        std::map<int, unsigned long long> latest;
        for (unsigned k = 0; k < std::min<std::size_t>(n, samples.size()); ++k) {
            const auto& sample = samples[k];
            const int pid = static_cast<int>(sample.pid);
            if (auto it = latest.find(pid); it != latest.end() && it->second >= sample.time_stamp) continue;
            latest[pid] = sample.time_stamp;
            m.process_utilization[pid] = ProcessUtilization{static_cast<int>(std::min(sample.sm_util, 100u)),
                                                            static_cast<int>(std::min(sample.mem_util, 100u))};
        }
        m.process_utilization_read = true;
        return;
    }
}

}  // namespace

GpuMeterReader::GpuMeterReader(std::string library) : file_(std::move(library)) {}

GpuMeterReader::~GpuMeterReader() {
    if (initialised_) library_->shutdown();
}

bool GpuMeterReader::ready() {
    if (tried_) return initialised_;
    tried_ = true;
    try {
        library_ = nvml::load_library(file_);
    } catch (const std::exception& error) {
        problem_ = fmt::format("no GPU meters: {}", error.what());
        return false;
    }
    const nvml::Return result = library_->init();
    if (result != nvml::kSuccess) {
        problem_ = fmt::format("no GPU meters: nvmlInit: {}", library_->describe(result));
        return false;
    }
    initialised_ = true;
    return true;
}

std::optional<GpuMeters> GpuMeterReader::read(const std::string& uuid) {
    if (!ready()) return std::nullopt;
    const nvml::Library& l = *library_;
    unsigned count = 0;
    if (const nvml::Return result = l.device_count(&count); result != nvml::kSuccess) {
        problem_ = fmt::format("no GPU meters: nvmlDeviceGetCount: {}", l.describe(result));
        return std::nullopt;
    }
    for (unsigned i = 0; i < count; ++i) {
        nvml::Device device = nullptr;
        char name[96] = {};
        if (l.handle_by_index(i, &device) != nvml::kSuccess || l.device_uuid(device, name, sizeof name) != nvml::kSuccess) continue;
        if (uuid != name) continue;
        GpuMeters m;
        m.uuid = uuid;
        if (nvml::Utilization u{}; l.utilization && l.utilization(device, &u) == nvml::kSuccess) {
            m.gpu_percent = static_cast<int>(u.gpu);
            m.memory_percent = static_cast<int>(u.memory);
        }
        if (nvml::Memory memory{}; l.memory_info && l.memory_info(device, &memory) == nvml::kSuccess) {
            m.memory_used_bytes = memory.used;
            m.memory_total_bytes = memory.total;
        }
        if (unsigned mw = 0; l.power_usage && l.power_usage(device, &mw) == nvml::kSuccess) m.power_watts = static_cast<double>(mw) / 1000.0;
        if (unsigned mw = 0; l.power_limit && l.power_limit(device, &mw) == nvml::kSuccess) m.power_limit_watts = static_cast<double>(mw) / 1000.0;
        if (unsigned mhz = 0; l.clock && l.clock(device, nvml::kClockSm, &mhz) == nvml::kSuccess) m.sm_clock_mhz = static_cast<int>(mhz);
        if (unsigned mhz = 0; l.max_clock && l.max_clock(device, nvml::kClockSm, &mhz) == nvml::kSuccess)
            m.max_sm_clock_mhz = static_cast<int>(mhz);
        if (unsigned c = 0; l.temperature && l.temperature(device, nvml::kTemperatureGpu, &c) == nvml::kSuccess)
            m.temperature_c = static_cast<int>(c);
        if (l.compute_processes) {
            // Two tries: the list may grow between asking its size and reading it.
            for (int attempt = 0; attempt < 2; ++attempt) {
                unsigned n = 0;
                nvml::Return result = l.compute_processes(device, &n, nullptr);
                if (result != nvml::kSuccess && result != nvml::kInsufficientSize) break;
                n += 8;
                const std::size_t stride = l.processes_v2_layout ? sizeof(nvml::ProcessInfoV2) : sizeof(nvml::ProcessInfoV1);
                std::vector<unsigned char> buffer(n * stride);
                result = l.compute_processes(device, &n, buffer.data());
                if (result == nvml::kInsufficientSize) continue;
                if (result != nvml::kSuccess) break;
                for (unsigned k = 0; k < n; ++k) {
                    nvml::ProcessInfoV1 info{};  // pid and memory lead both layouts
                    std::memcpy(&info.pid, buffer.data() + k * stride, sizeof info.pid);
                    std::memcpy(&info.used_gpu_memory, buffer.data() + k * stride + offsetof(nvml::ProcessInfoV1, used_gpu_memory),
                                sizeof info.used_gpu_memory);
                    if (info.used_gpu_memory != ~0ull) m.process_memory[static_cast<int>(info.pid)] = info.used_gpu_memory;
                }
                break;
            }
        }
        read_process_utilization(l, device, m);
        problem_.clear();
        return m;
    }
    problem_ = fmt::format("no GPU meters: NVML has no GPU {}", uuid.starts_with("GPU-00000000-0000-0000-0000-") ? "(a recording)" : uuid);
    return std::nullopt;
}

std::vector<std::string> meter_parts(const GpuMeters& m) {
    std::vector<std::string> parts;
    if (m.gpu_percent) parts.push_back(fmt::format("GPU {}%", *m.gpu_percent));
    if (m.memory_used_bytes && m.memory_total_bytes)
        parts.push_back(fmt::format("mem {:.1f}/{:.1f} GiB", static_cast<double>(*m.memory_used_bytes) / 1073741824.0,
                                    static_cast<double>(*m.memory_total_bytes) / 1073741824.0));
    if (m.power_watts)
        parts.push_back(m.power_limit_watts ? fmt::format("{:.0f}/{:.0f} W", *m.power_watts, *m.power_limit_watts)
                                            : fmt::format("{:.0f} W", *m.power_watts));
    if (m.sm_clock_mhz)
        parts.push_back(m.max_sm_clock_mhz ? fmt::format("SM {}/{} MHz", *m.sm_clock_mhz, *m.max_sm_clock_mhz)
                                           : fmt::format("SM {} MHz", *m.sm_clock_mhz));
    if (m.temperature_c) parts.push_back(fmt::format("{}°C", *m.temperature_c));
    return parts;
}

}  // namespace gpupart
