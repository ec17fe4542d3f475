#pragma once
// Frames for the `gpupart top` tests: the built-in H200 with partitioned processes made from slot
// records by hand (no registry, no processes), through the same make_top_data the live view uses.
#include <string>
#include <vector>

#include "controller/system_state.hpp"
#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "snapshot/snapshot_file.hpp"
#include "top/top_data.hpp"

namespace gpupart::top::test {

inline const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

// The built-in H200 as a source without the driver's floorplan leaves it: TPCs 62-65 (descriptor bits 75,
// 78, 81, 83; the driver puts them in gpc0) with no GPC and no slot, so the view shows its row of TPCs of
// no known GPC.
inline const Gpu& h200_with_tpcs_of_no_gpc() {
    static const Gpu gpu = [] {
        Gpu copy = h200();
        for (Tpc& tpc : copy.tpcs)
            if (tpc.mask_bit == 75 || tpc.mask_bit == 78 || tpc.mask_bit == 81 || tpc.mask_bit == 83) tpc.gpc.reset(), tpc.slot.reset();
        return copy;
    }();
    return gpu;
}

struct FakeProcess {
    int pid;
    std::string tpcs;  // mask expression (TPC numbers) on the H200, or "all" for an unpartitioned process
    std::string command;
    std::uint64_t launches = 1000;
    SlotAppMasks app = {};  // the masks the program chose itself (libgpupart.so); not in use by default
};

inline RegistryEntry entry_of(const FakeProcess& fake, const Gpu& on = h200()) {
    SlotRecord r;
    r.pid = fake.pid;
    r.start_time = 1000 + static_cast<std::uint64_t>(fake.pid);
    r.uid = 0;
    r.command = fake.command;
    r.shim_version = fake.command.starts_with("gpupart-demo-worker") ? "demo (simulated)" : "0.1.0";
    const std::string gpu = gpu_key(on);
    SlotControl control;
    control.generation = 1;
    // As a Registry read gives them: TPC numbers, translated from the slot's descriptor bits (numbered).
    if (fake.tpcs != "all") control.gpus.push_back(GpuControl{gpu, true, resolve_mask(fake.tpcs, on).mask, real_tpcs(on), true});
    r.control = control;
    SlotStatus status;
    status.state = GPUPART_SHIM_ACTIVE;
    GpuStatus here;
    here.uuid = gpu;
    here.state = GPUPART_SHIM_ACTIVE;
    here.applied_generation = 1;
    here.mask_applied = !control.gpus.empty();
    here.applied = control.gpus.empty() ? TpcMask{} : control.gpus[0].allowed;
    here.numbered = true;
    here.launches = fake.launches;
    status.gpus.push_back(here);
    r.status = status;
    r.counters.launches = fake.launches;
    r.app = fake.app;
    r.app.numbered = true;  // the program's masks in TPC numbers, as the shim stores them (GPUPART_APP_NUMBERED)
    return RegistryEntry{"/fake/" + std::to_string(fake.pid) + ".slot", r, Liveness::alive, "", std::nullopt, 0, false};
}

// The frame `gpupart top` shows for these processes; `second_sample` adds launch rates (+400/s each);
// `on`: the GPU (the built-in H200, or a test's changed copy of it).
inline TopData frame_data(const std::vector<FakeProcess>& fakes, bool mps = false, bool second_sample = true, const Gpu& on = h200()) {
    std::vector<RegistryEntry> entries;
    SystemState state;
    state.gpu = on;
    state.mps_running = mps;
    state.gpu_uuid = gpu_key(on);
    // As gather_state makes them from the registry.
    const auto states_of = [&](const std::vector<RegistryEntry>& from) {
        std::vector<ProcessState> processes;
        for (const RegistryEntry& entry : from) {
            const SlotRecord& r = *entry.record;
            ProcessState p;
            p.pid = r.pid;
            p.start_time = r.start_time;
            p.command = r.command;
            p.gpus = gpus_of(r);
            if (const GpuControl* mine = r.control->gpu(state.gpu_uuid)) {
                p.partitioned = mine->has_mask;
                p.mask = mine->allowed;
            }
            p.generation = 1;
            p.app = r.app;
            describe_process_on_gpu(r, state.gpu_uuid, p);
            processes.push_back(p);
        }
        return processes;
    };
    for (const FakeProcess& fake : fakes) entries.push_back(entry_of(fake, on));
    state.processes = states_of(entries);
    TopSource source{"builtin:h200", true, "no NVIDIA GPU on this machine: showing the built-in recorded H200", "", 1};
    LaunchRates rates(kTopRateWindow);
    const auto start = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
    TopData data = make_top_data(state, source, "/run/gpupart", rates, start);
    if (second_sample) {
        for (auto& entry : entries) entry.record->counters.launches += 400;
        state.processes = states_of(entries);
        data = make_top_data(state, source, "/run/gpupart", rates, start + std::chrono::seconds(1));
    }
    data.clock = "12:00:00";
    return data;
}

inline std::vector<FakeProcess> demo_processes() {
    return {{4101, "gpc0-3", "gpupart-demo-worker llm-serving (simulated workload, no GPU)"},
            {4102, "gpc4-5", "gpupart-demo-worker vision (simulated workload, no GPU)"},
            {4103, "gpc6-7", "gpupart-demo-worker batch-train (simulated workload, no GPU)"}};
}

}  // namespace gpupart::top::test
