#include "process_rows.hpp"

#include <algorithm>

#include "display_text.hpp"
#include "model/gpu_queries.hpp"
#include "owner_colors.hpp"
#include "platform/user_names.hpp"

namespace gpupart::widgets {
namespace {

std::string fmt_gpus(const std::vector<std::string>& gpus) {
    std::string text;
    for (const auto& uuid : gpus) text += (text.empty() ? "" : ", ") + uuid;
    return text;
}

void describe_shim(const ProcessState& process, ProcessRow& row) {
    row.shim = QString::fromStdString(process.shim_word == "active" ? "active" : process.shim_sentence);
    if (process.shim_word == "pending") row.shim = "pending: next launch";
    if (process.shim_word == "waiting") row.shim = "waiting for a launch";
    if (process.shim_word == "passthru" && process.shim_code == GPUPART_SHIM_UNSUPPORTED_DESCRIPTOR)
        row.shim = QString("unsupported descriptor 0x%1: not partitioned").arg(process.descriptor_version, 2, 16, QChar('0'));
    row.shim_problem = process.shim_problem;
    row.shim_detail = QString("shim %1, descriptor 0x%2\nlaunches on this GPU %3 (masked %4), on all GPUs %5, errors %6, "
                              "refused masks %7")
                          .arg(plain_text(process.shim_version))
                          .arg(process.descriptor_version, 2, 16, QChar('0'))
                          .arg(process.launches)
                          .arg(process.masked_launches)
                          .arg(process.launches_all_gpus)
                          .arg(process.errors)
                          .arg(process.refused_masks);
    if (!process.start_rule.empty()) row.shim_detail += "\nstart mask from " + plain_text(process.start_rule);
    if (process.gpus.size() > 1)
        row.shim_detail += QString("\non %1 GPUs: %2").arg(process.gpus.size()).arg(plain_text(fmt_gpus(process.gpus)));
    // CUDA graphs (docs/cuda-graphs.md): execs on an older mask are said in the cell, those that cannot follow in red.
    const GraphStatus& graphs = process.graphs;
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

// Both masks, as the tooltip says them: the operator's bound (gpupart set), then the program's own choices
// (libgpupart.so) with what each runs on under that bound, and the launches that used them.
void describe_masks(const ProcessState& process, const TpcMask& real, ProcessRow& row) {
    row.masks_detail = process.partitioned ? QString("Operator's mask (gpupart set): TPCs %1").arg(QString::fromStdString(process.mask.to_list()))
                                           : QString("Operator's mask: none (may run on every TPC)");
    const SlotAppMasks& app = process.app;
    row.app_masks = app.in_use;
    if (!app.in_use) return;
    row.masks_detail += "\nProgram's own masks (libgpupart.so), chosen → run on:";
    // Items as "• ": a tooltip is rich text, where leading spaces collapse.
    if (app.publishing) row.masks_detail += "\n• being written by the program: shown at the next refresh";
    const std::optional<TpcMask> bound = process.partitioned ? std::optional<TpcMask>(process.mask) : std::nullopt;
    for (const AppMaskRow& mask : app_mask_rows(app, bound, real))
        row.masks_detail += "\n• " + QString::fromStdString(app_mask_row_text(mask, real));
    if (app.streams_hidden > 0) row.masks_detail += QString("\n• and %1 more stream masks the slot has no room for").arg(app.streams_hidden);
    row.masks_detail += QString("\nLaunches on the program's masks: %1 (next-launch masks %2, outside the operator's mask %3)")
                            .arg(app.app_launches)
                            .arg(app.next_launches)
                            .arg(app.outside_bound);
    if (!app.problem.empty()) row.masks_detail += "\n" + plain_text(app.problem);
}

}  // namespace

std::vector<ProcessRow> process_rows(const SystemState& state, LaunchRates& rates, LaunchRates::Clock::time_point now) {
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
        row.other_gpus = static_cast<int>(std::count_if(process.gpus.begin(), process.gpus.end(),
                                                        [&](const std::string& uuid) { return uuid != state.gpu_uuid; }));
        row.gpus_detail = process.gpus.empty() ? QString("no context on any GPU yet: it may open any, unconfined")
                                               : QString("on %1").arg(plain_text(fmt_gpus(process.gpus)));
        row.partitioned = process.partitioned;
        row.tpcs = process.partitioned ? process.mask & real : real;
        row.tpc_count = row.tpcs.count();
        row.sm_count = static_cast<int>(sms_of(state.gpu, row.tpcs).size());
        row.share = real_count > 0 ? static_cast<double>(row.tpc_count) / real_count : 0;
        const OwnerMark mark = owner_mark(process.pid, process.start_time);
        row.color = owner_palette_color(mark.index);
        row.letter = owner_letter_of(mark);
        // MPS decides whether partitions run side by side (docs/mps-fault-domain.md); which server a client
        // is attached to is NVML's and mps-control's to say, which the registry cannot.
        row.mps = !state.mps_running ? "no MPS" : state.mps_static_partitioning ? "MPS (static SM partitions)" : "MPS up";
        describe_shim(process, row);
        describe_masks(process, real, row);
        row.launches_per_second = rates.update(process.pid, process.start_time, process.submissions(), now);
        alive.emplace_back(process.pid, process.start_time);
        for (const Process& known : state.gpu.processes)
            if (known.pid == process.pid && known.gpu_memory_bytes.known()) row.gpu_memory_bytes = known.gpu_memory_bytes.value;
        rows.push_back(std::move(row));
    }
    rates.forget_except(alive);
    return rows;
}

}  // namespace gpupart::widgets
