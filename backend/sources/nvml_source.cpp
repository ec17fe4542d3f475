#include "sources/nvml_source.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/proc_file.hpp"
#include "sources/nvml_library.hpp"

namespace gpupart {
namespace {

constexpr unsigned long long kValueNotAvailable = ~0ull;  // NVML_VALUE_NOT_AVAILABLE

Provenance from(const char* call) { return Provenance{Source::nvml, call}; }

// One NVML query as a fact: the value on success, else the reason (a missing symbol or NVML's error).
template <typename T, typename Call>
Fact<T> ask(const nvml::Library& library, bool available, const char* call, Call&& query) {
    if (!available) return unknown_fact<T>(fmt::format("this NVML has no {}", call), from(call));
    T value{};
    const nvml::Return result = query(value);
    if (result == nvml::kSuccess) return known_fact(std::move(value), from(call));
    return unknown_fact<T>(fmt::format("{}: {}", call, library.describe(result)), from(call));
}

std::string proc_comm(unsigned pid) {
    return read_first_line(fmt::format("/proc/{}/comm", pid));
}

void read_processes(const nvml::Library& l, nvml::Device handle, NvmlDevice& device) {
    if (l.compute_processes == nullptr) {
        device.processes_unknown = "this NVML has no nvmlDeviceGetComputeRunningProcesses";
        return;
    }
    const std::size_t entry = l.processes_v2_layout ? sizeof(nvml::ProcessInfoV2) : sizeof(nvml::ProcessInfoV1);
    std::vector<unsigned char> buffer;
    unsigned count = 0;
    nvml::Return result = nvml::kInsufficientSize;
    for (int attempt = 0; attempt < 4 && result == nvml::kInsufficientSize; ++attempt) {
        count += 16;  // processes come and go between the calls: ask with room to spare
        buffer.assign(count * entry, 0);
        result = l.compute_processes(handle, &count, buffer.data());
    }
    if (result != nvml::kSuccess) {
        device.processes_unknown = fmt::format("nvmlDeviceGetComputeRunningProcesses: {}", l.describe(result));
        return;
    }
    for (unsigned i = 0; i < count; ++i) {
        nvml::ProcessInfoV2 info{};
        if (l.processes_v2_layout) {
            std::memcpy(&info, buffer.data() + i * entry, entry);
        } else {
            nvml::ProcessInfoV1 v1{};
            std::memcpy(&v1, buffer.data() + i * entry, entry);
            info.pid = v1.pid;
            info.used_gpu_memory = v1.used_gpu_memory;
        }
        NvmlProcess process;
        process.pid = static_cast<int>(info.pid);
        char name[256] = {};
        if (l.process_name == nullptr || l.process_name(info.pid, name, sizeof name) != nvml::kSuccess || name[0] == '\0')
            process.name = proc_comm(info.pid);
        else
            process.name = name;
        process.used_memory_bytes =
            info.used_gpu_memory == kValueNotAvailable
                ? unknown_fact<std::uint64_t>("NVML reports no memory figure for it", from("nvmlDeviceGetComputeRunningProcesses"))
                : known_fact<std::uint64_t>(info.used_gpu_memory, from("nvmlDeviceGetComputeRunningProcesses"));
        device.processes.push_back(std::move(process));
    }
    std::sort(device.processes.begin(), device.processes.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
}

NvmlDevice read_device(const nvml::Library& l, unsigned index, nvml::Device handle) {
    NvmlDevice d;
    d.index = static_cast<int>(index);
    char text[128] = {};
    auto text_fact = [&](const char* call, nvml::Return (*query)(nvml::Device, char*, unsigned)) {
        return ask<std::string>(l, true, call, [&](std::string& value) {
            text[0] = '\0';
            const nvml::Return result = query(handle, text, sizeof text);
            value = text;
            return result;
        });
    };
    d.name = text_fact("nvmlDeviceGetName", l.device_name);
    d.uuid = text_fact("nvmlDeviceGetUUID", l.device_uuid);
    d.pci_bus_id = ask<std::string>(l, l.pci_info != nullptr, "nvmlDeviceGetPciInfo", [&](std::string& value) {
        nvml::PciInfo pci{};
        const nvml::Return result = l.pci_info(handle, &pci);
        pci.bus_id[sizeof pci.bus_id - 1] = '\0';
        value = pci.bus_id;
        return result;
    });
    d.sm_count = ask<int>(l, l.attributes != nullptr, "nvmlDeviceGetAttributes", [&](int& value) {
        nvml::DeviceAttributes attributes{};
        const nvml::Return result = l.attributes(handle, &attributes);
        value = static_cast<int>(attributes.multiprocessor_count);
        return result;
    });
    if (!d.sm_count.known()) d.sm_count.unknown_reason += " (NVML gives SM counts for MIG devices only)";
    nvml::Memory memory{};
    const nvml::Return memory_result = l.memory_info != nullptr ? l.memory_info(handle, &memory) : nvml::kSuccess;
    d.memory_total_bytes = ask<std::uint64_t>(l, l.memory_info != nullptr, "nvmlDeviceGetMemoryInfo", [&](std::uint64_t& value) {
        value = memory.total;
        return memory_result;
    });
    d.memory_used_bytes = ask<std::uint64_t>(l, l.memory_info != nullptr, "nvmlDeviceGetMemoryInfo", [&](std::uint64_t& value) {
        value = memory.used;
        return memory_result;
    });
    nvml::Utilization utilization{};
    const nvml::Return utilization_result = l.utilization != nullptr ? l.utilization(handle, &utilization) : nvml::kSuccess;
    d.gpu_utilization_percent = ask<int>(l, l.utilization != nullptr, "nvmlDeviceGetUtilizationRates", [&](int& value) {
        value = static_cast<int>(utilization.gpu);
        return utilization_result;
    });
    d.memory_utilization_percent = ask<int>(l, l.utilization != nullptr, "nvmlDeviceGetUtilizationRates", [&](int& value) {
        value = static_cast<int>(utilization.memory);
        return utilization_result;
    });
    auto clock = [&](const char* call, nvml::Return (*query)(nvml::Device, int, unsigned*), int type) {
        return ask<int>(l, query != nullptr, call, [&](int& value) {
            unsigned mhz = 0;
            const nvml::Return result = query(handle, type, &mhz);
            value = static_cast<int>(mhz);
            return result;
        });
    };
    d.sm_clock_mhz = clock("nvmlDeviceGetClockInfo", l.clock, nvml::kClockSm);
    d.max_sm_clock_mhz = clock("nvmlDeviceGetMaxClockInfo", l.max_clock, nvml::kClockSm);
    d.memory_clock_mhz = clock("nvmlDeviceGetClockInfo", l.clock, nvml::kClockMemory);
    unsigned current = 0;
    unsigned pending = 0;
    const nvml::Return mig_result = l.mig_mode != nullptr ? l.mig_mode(handle, &current, &pending) : nvml::kSuccess;
    d.mig_enabled = ask<bool>(l, l.mig_mode != nullptr, "nvmlDeviceGetMigMode", [&](bool& value) {
        value = current != 0;
        return mig_result;
    });
    d.mig_pending = ask<bool>(l, l.mig_mode != nullptr, "nvmlDeviceGetMigMode", [&](bool& value) {
        value = pending != 0;
        return mig_result;
    });
    if (mig_result == nvml::kNotSupported) {  // a GPU without MIG: MIG is off, as a fact
        d.mig_enabled = known_fact(false, from("nvmlDeviceGetMigMode (not supported: no MIG on this GPU)"));
        d.mig_pending = known_fact(false, from("nvmlDeviceGetMigMode (not supported: no MIG on this GPU)"));
    }
    read_processes(l, handle, d);
    return d;
}

SourceStatus as_nvml(SourceState state, std::string detail) { return SourceStatus{Source::nvml, state, std::move(detail)}; }

}  // namespace

NvmlFacts read_nvml(const std::string& library) {
    NvmlFacts facts;
    facts.driver_version = unknown_fact<std::string>("NVML not read", from("nvmlSystemGetDriverVersion"));
    nvml::Library l;
    try {
        l = nvml::load_library(library);
    } catch (const nvml::NvmlAbsent& error) {
        facts.status = as_nvml(SourceState::absent, error.what());
        return facts;
    } catch (const nvml::NvmlUnusable& error) {
        facts.status = as_nvml(SourceState::unsupported, error.what());
        return facts;
    }
    const nvml::Return init = l.init();
    if (init != nvml::kSuccess) {
        const std::string detail = fmt::format("nvmlInit: {}", l.describe(init));
        facts.status = as_nvml(init == nvml::kDriverNotLoaded  ? SourceState::absent
                              : init == nvml::kNoPermission   ? SourceState::refused
                              : init == nvml::kLibRmVersionMismatch ? SourceState::unsupported
                                                                     : SourceState::failed,
                              detail);
        return facts;
    }
    char version[96] = {};
    facts.driver_version = ask<std::string>(l, l.driver_version != nullptr, "nvmlSystemGetDriverVersion", [&](std::string& value) {
        const nvml::Return result = l.driver_version(version, sizeof version);
        value = version;
        return result;
    });
    unsigned count = 0;
    const nvml::Return counted = l.device_count(&count);
    if (counted != nvml::kSuccess) {
        facts.status = as_nvml(SourceState::failed, fmt::format("nvmlDeviceGetCount: {}", l.describe(counted)));
        l.shutdown();
        return facts;
    }
    std::vector<std::string> problems;
    for (unsigned i = 0; i < count; ++i) {
        nvml::Device handle = nullptr;
        const nvml::Return result = l.handle_by_index(i, &handle);
        if (result != nvml::kSuccess) {
            problems.push_back(fmt::format("GPU {}: nvmlDeviceGetHandleByIndex: {}", i, l.describe(result)));
            continue;
        }
        facts.devices.push_back(read_device(l, i, handle));
    }
    l.shutdown();
    facts.status = problems.empty()
                       ? as_nvml(SourceState::ok, fmt::format("{} GPU(s), driver {}", count,
                                                             facts.driver_version.value.value_or("unknown")))
                       : as_nvml(SourceState::failed, fmt::format("{} of {} GPU(s) unreadable: {}", problems.size(), count,
                                                                 problems.front()));
    return facts;
}

MpsFacts read_mps() {
    MpsFacts mps;
    mps.state = mps_status();
    try {
        mps.clients = mps_clients(mps.state);
    } catch (const UserError& error) {
        mps.clients_unknown = error.what();
    }
    return mps;
}

void attach_mps_clients(NvmlFacts& nvml, const MpsFacts& mps) {
    for (NvmlDevice& device : nvml.devices)
        for (NvmlProcess& process : device.processes) {
            const auto it = mps.clients.find(process.pid);
            const bool server = it != mps.clients.end() ||
                                std::find(mps.state.server_pids.begin(), mps.state.server_pids.end(), process.pid) !=
                                    mps.state.server_pids.end();
            process.mps_server = server;
            process.mps_clients = it != mps.clients.end() ? it->second : std::vector<int>{};
        }
}

}  // namespace gpupart
