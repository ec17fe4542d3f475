#include "top/top_data.hpp"

#include <ctime>

#include <fmt/format.h>

#include "controller/rules.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "platform/user_names.hpp"
#include "registry/graph_status.hpp"
#include "platform/process_identity.hpp"

namespace gpupart::top {
namespace {

std::string local_clock() {
    const std::time_t now = std::time(nullptr);
    std::tm parts{};
    ::localtime_r(&now, &parts);
    char text[16];
    std::strftime(text, sizeof text, "%H:%M:%S", &parts);
    return text;
}

}  // namespace

TopData make_top_data(const SystemState& state, const TopSource& source,
                      const std::string& registry_dir, LaunchRates& rates, std::chrono::steady_clock::time_point now) {
    OwnerLetters letters;
    return make_top_data(state, source, registry_dir, rates, letters, now);
}

TopData make_top_data(const SystemState& state, const TopSource& source, const std::string& registry_dir,
                      LaunchRates& rates, OwnerLetters& letters, std::chrono::steady_clock::time_point now) {
    TopData data;
    data.gpu = state.gpu;
    data.source = source;
    data.registry_dir = registry_dir;
    data.mps_running = state.mps_running;
    data.findings = check_result(state);
    for (Finding& finding : data.findings) finding.message = one_line(finding.message);
    data.clock = local_clock();
    std::vector<std::pair<int, std::uint64_t>> alive;
    // Everything comes from the controller's one registry read: its unreadable slots (of live processes,
    // or whose name does not tell) and its per-GPU process view.
    for (const UnreadableSlot& slot : state.unreadable)
        if (data.unreadable_slots++ == 0) data.unreadable_problem = one_line(fmt::format("{}: {}", slot.path, slot.problem));
    // The processes on this GPU, as the controller's state sees them (one view for every front end).
    for (const ProcessState& p : state.processes) {
        TopProcess process;
        process.pid = p.pid;
        process.start_time = p.start_time;
        process.user = one_line(user_name(p.uid));
        process.command = one_line(p.command);
        process.partitioned = p.partitioned;
        process.mask = p.mask;
        process.generation = p.generation;
        if (p.app.in_use) {
            const std::optional<TpcMask> bound = p.partitioned ? std::optional<TpcMask>(p.mask) : std::nullopt;
            const TpcMask real = real_tpcs(state.gpu);
            process.app_masks = true;
            process.app_summary = one_line(app_masks_summary(p.app, real));
            if (!p.app.problem.empty()) process.app_lines.push_back({"problem: " + one_line(p.app.problem), true});
            for (const AppMaskRow& row : app_mask_rows(p.app, bound, real))
                process.app_lines.push_back({app_mask_row_text(row, real), row.effective.outside_bound});
            process.app_outside = p.app.outside_bound;
        }
        process.applied = p.applied;
        process.shim = p.shim_word;
        process.shim_detail = p.shim_sentence;
        if (const std::string graphs = graph_sentence(p.graphs); !graphs.empty()) process.shim_detail += "; " + graphs;
        std::string others;  // the other GPUs it is on (G shows them), by the UUID's first 8 hex digits
        for (const std::string& uuid : p.gpus)
            if (uuid != state.gpu_uuid) others += (others.empty() ? "" : ", ") + uuid.substr(0, 12);
        if (!others.empty()) process.shim_detail += "; also on " + others;
        process.launches = p.launches_all_gpus;
        process.launches_per_second = rates.update(p.pid, p.start_time, p.submissions(), now);
        process.simulated = p.simulated;
        alive.emplace_back(p.pid, p.start_time);
        data.processes.push_back(std::move(process));
    }
    rates.forget_except(alive);
    std::vector<OwnerLetters::Alive> owners;
    for (const TopProcess& p : data.processes) owners.push_back({p.pid, p.start_time, p.command});
    data.exited = letters.update(owners);
    for (TopProcess& p : data.processes) {
        const OwnerMark mark = letters.mark(p.pid, p.start_time);
        p.letter = mark.letter;
        p.colour = mark.index < 0 ? 0 : mark.index % kOwnerColours;
    }
    return data;
}

void add_meters(TopData& data, const std::optional<GpuMeters>& meters, const std::string& problem) {
    data.meters = meters;
    data.meters_problem = meters ? "" : one_line(problem);
    if (!meters) return;
    // Under MPS NVML charges every client's memory to the server: clients stay "-" (the header says why).
    for (TopProcess& process : data.processes) {
        if (const auto it = meters->process_memory.find(process.pid); it != meters->process_memory.end())
            process.memory_bytes = it->second;
        // NVML samples a process only while it runs work: a read without this pid means 0%, not unknown.
        // Under MPS NVML gives the whole GPU's time to the server (measured on an H100, driver 580: the
        // server 99%, the clients no sample): a client without a sample stays "-", and LAUNCH/s is its measure.
        if (!process.simulated) process.gpu_percent = gpu_process_percent(*meters, process.pid, data.mps_running);
    }
}

void add_smlp(TopData& data, std::vector<SmlpEntry> entries, std::uint64_t now_ns) {
    for (SmlpEntry& entry : entries)
        if (entry.component)
            for (auto* queue : {&entry.component->sq, &entry.component->fq, &entry.component->pq})
                for (SmlpRequest& request : *queue) request.label = one_line(request.label);
    data.smlp = std::move(entries);
    data.smlp_now_ns = now_ns;
}

void add_usage(TopData& data, ProcessUsageSampler& usage, std::chrono::steady_clock::time_point now) {
    std::vector<std::pair<int, std::uint64_t>> alive;
    for (TopProcess& process : data.processes) {
        // Every process, a demo worker too: it is a real process on this host, and the app shows its CPU and RSS.
        const ProcessUsage sample = usage.sample(process.pid, process.start_time, now);
        process.cpu_percent = sample.cpu_percent;
        process.rss_bytes = sample.rss_bytes;
        alive.emplace_back(process.pid, process.start_time);
    }
    usage.forget_except(alive);
}

}  // namespace gpupart::top
