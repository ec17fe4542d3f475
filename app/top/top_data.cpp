#include "top/top_data.hpp"

#include <ctime>

#include <fmt/format.h>

#include "controller/rules.hpp"
#include "model/user_error.hpp"
#include "platform/user_names.hpp"
#include "registry/graph_status.hpp"
#include "registry/process_identity.hpp"

namespace gpupart::top {
namespace {

// The shim's state in one word for the table (the status line gives the whole sentence).
std::string shim_word(const SlotRecord& record) {
    if (!record.status) return "starting";
    switch (record.status->state) {
        case GPUPART_SHIM_WAITING: return "waiting";
        case GPUPART_SHIM_ACTIVE: return "active";
        case GPUPART_SHIM_UNSUPPORTED_DESCRIPTOR: return "passthru";  // both: the status line says why
        case GPUPART_SHIM_CALLBACK_FAILED: return "passthru";
        case GPUPART_SHIM_MASK_REFUSED: return "refused";
        case GPUPART_SHIM_BAD_ENVIRONMENT: return "bad env";
    }
    return "unknown";
}

std::string local_clock() {
    const std::time_t now = std::time(nullptr);
    std::tm parts{};
    ::localtime_r(&now, &parts);
    char text[16];
    std::strftime(text, sizeof text, "%H:%M:%S", &parts);
    return text;
}

}  // namespace

char owner_letter(std::size_t index) {
    if (index < 26) return static_cast<char>('A' + index);
    if (index < 52) return static_cast<char>('a' + (index - 26));
    return '#';
}

TopData make_top_data(const SystemState& state, const std::vector<RegistryEntry>& entries, const TopSource& source,
                      const std::string& registry_dir, LaunchRates& rates, std::chrono::steady_clock::time_point now) {
    TopData data;
    data.gpu = state.gpu;
    data.source = source;
    data.registry_dir = registry_dir;
    data.mps_running = state.mps_running;
    data.findings = check_result(state);
    for (Finding& finding : data.findings) finding.message = one_line(finding.message);
    data.clock = local_clock();
    std::vector<std::pair<int, std::uint64_t>> alive;
    for (const RegistryEntry& entry : entries) {
        if (!entry.record) {
            if (data.unreadable_slots++ == 0)
                data.unreadable_problem = one_line(fmt::format("{}: {}", entry.path, entry.problem));
            continue;
        }
        if (entry.liveness != Liveness::alive) continue;
        const SlotRecord& r = *entry.record;
        TopProcess process;
        process.pid = r.pid;
        process.start_time = r.start_time;
        process.user = one_line(user_name(r.uid));
        process.command = one_line(r.command);
        if (r.control) {
            process.partitioned = r.control->has_mask;
            process.mask = r.control->allowed;
            process.generation = r.control->generation;
        }
        process.applied = applied_text(r);
        process.shim = shim_word(r);
        process.shim_detail = r.status ? std::string(to_string(r.status->state)) : "the shim is publishing its status";
        if (const std::string graphs = graph_sentence(graph_status(r)); !graphs.empty()) process.shim_detail += "; " + graphs;
        process.launches = r.counters.launches;
        process.launches_per_second = rates.update(r.pid, r.start_time, r.counters.launches, now);
        process.simulated = r.shim_version.starts_with("demo");
        alive.emplace_back(r.pid, r.start_time);
        data.processes.push_back(std::move(process));
    }
    rates.forget_except(alive);
    for (std::size_t i = 0; i < data.processes.size(); ++i) {
        data.processes[i].letter = owner_letter(i);
        data.processes[i].colour = static_cast<int>(i % kOwnerColours);
    }
    return data;
}

}  // namespace gpupart::top
