#include "process_rows.hpp"

#include "display_text.hpp"
#include "model/gpu_queries.hpp"
#include "owner_colors.hpp"
#include "platform/user_names.hpp"
#include "registry/graph_status.hpp"
#include "registry/process_identity.hpp"

namespace gpupart::widgets {
namespace {

const SlotRecord* record_of(const std::vector<RegistryEntry>& entries, const ProcessState& process) {
    for (const RegistryEntry& entry : entries)
        if (entry.record && entry.record->pid == process.pid && entry.record->start_time == process.start_time)
            return &*entry.record;
    return nullptr;
}

void describe_shim(const SlotRecord& record, ProcessRow& row) {
    if (!record.status) {
        row.shim = "publishing";
        return;
    }
    const SlotStatus& status = *record.status;
    const bool pending = mask_change_pending(record);
    switch (status.state) {
    case GPUPART_SHIM_WAITING: row.shim = "waiting for a launch"; break;
    case GPUPART_SHIM_ACTIVE: row.shim = pending ? "pending: next launch" : "active"; break;
    case GPUPART_SHIM_UNSUPPORTED_DESCRIPTOR:
        row.shim = QString("unsupported descriptor 0x%1: not partitioned").arg(status.descriptor_version, 2, 16, QChar('0'));
        row.shim_problem = true;
        break;
    case GPUPART_SHIM_CALLBACK_FAILED:
        row.shim = "callback failed: not partitioned";
        row.shim_problem = true;
        break;
    case GPUPART_SHIM_MASK_REFUSED:
        row.shim = "mask refused: previous kept";
        row.shim_problem = true;
        break;
    case GPUPART_SHIM_BAD_ENVIRONMENT:
        row.shim = "bad GPUPART_TPCS: no mask";
        row.shim_problem = true;
        break;
    default:
        row.shim = QString::fromUtf8(to_string(status.state).data());
        row.shim_problem = true;
        break;
    }
    row.shim_detail = QString("shim %1, descriptor 0x%2\nlaunches %3 (masked %4), errors %5, refused masks %6")
                          .arg(plain_text(record.shim_version))
                          .arg(status.descriptor_version, 2, 16, QChar('0'))
                          .arg(record.counters.launches)
                          .arg(record.counters.masked_launches)
                          .arg(record.counters.errors)
                          .arg(record.counters.refused_masks);
    if (!record.start_rule.empty()) row.shim_detail += "\nstart mask from " + plain_text(record.start_rule);
    // CUDA graphs (docs/cuda-graphs.md): execs on an older mask are said in the cell, those that cannot follow in red.
    const GraphStatus graphs = graph_status(record);
    if (const std::string sentence = graph_sentence(graphs); !sentence.empty())
        row.shim_detail += "\n" + QString::fromStdString(sentence);
    const bool not_followed = graphs_not_followed(graphs);
    if (not_followed || graphs.unfollowable > 0) {
        row.shim += not_followed ? " · graphs not followed" : QString(" · %1 graph(s) cannot follow").arg(graphs.unfollowable);
        row.shim_problem = true;
    } else if (graphs.older > 0) {
        row.shim += QString(" · %1 graph(s) at next launch").arg(graphs.older);
    }
}

}  // namespace

std::vector<ProcessRow> process_rows(const SystemState& state, const std::vector<RegistryEntry>& entries,
                                     LaunchRates& rates, LaunchRates::Clock::time_point now) {
    const TpcMask real = real_tpcs(state.gpu);
    const int real_count = real.count();
    std::vector<std::pair<int, std::uint64_t>> alive;
    std::vector<ProcessRow> rows;
    for (const ProcessState& process : state.processes) {
        ProcessRow row;
        row.pid = process.pid;
        row.start_time = process.start_time;
        row.user = plain_text(user_name(process.uid));
        row.command = plain_text(process.command);
        row.gpu = state.gpu.index;
        row.partitioned = process.partitioned;
        row.tpcs = process.partitioned ? process.mask & real : real;
        row.tpc_count = row.tpcs.count();
        row.sm_count = static_cast<int>(sms_of(state.gpu, row.tpcs).size());
        row.share = real_count > 0 ? static_cast<double>(row.tpc_count) / real_count : 0;
        row.color = owner_color(process.pid, process.start_time);
        // MPS decides whether partitions run side by side (HARDWARE.md section 2); which server a client
        // is attached to is NVML's and mps-control's to say, which the registry cannot.
        row.mps = !state.mps_running ? "no MPS" : state.mps_static_partitioning ? "MPS (static SM partitions)" : "MPS up";
        if (const SlotRecord* record = record_of(entries, process)) {
            describe_shim(*record, row);
            row.launches_per_second = rates.update(process.pid, process.start_time, record->counters.launches, now);
            alive.emplace_back(process.pid, process.start_time);
        } else {
            row.shim = "slot unreadable";
            row.shim_problem = true;
        }
        for (const Process& known : state.gpu.processes)
            if (known.pid == process.pid && known.gpu_memory_bytes.known()) row.gpu_memory_bytes = known.gpu_memory_bytes.value;
        rows.push_back(std::move(row));
    }
    rates.forget_except(alive);
    return rows;
}

}  // namespace gpupart::widgets
