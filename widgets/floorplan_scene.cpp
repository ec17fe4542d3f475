#include "floorplan_scene.hpp"

#include <filesystem>

#include "display_text.hpp"
#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "floorplan_geometry.hpp"
#include "owner_colors.hpp"

namespace gpupart::widgets {

QString short_command(const std::string& command) {
    // The program name tells processes apart; for interpreters and the demo worker the first argument
    // does ("python3 serve.py" is serve.py). The whole command line is in the table and the tooltip.
    const QStringList words = plain_text(command).split(' ', Qt::SkipEmptyParts);
    if (words.isEmpty()) return plain_text(command);
    const QString program = QString::fromStdString(std::filesystem::path(words[0].toStdString()).filename().string());
    static const QStringList wrappers = {"python", "python3", "bash", "sh", "node", "gpupart-demo-worker", "torchrun"};
    const bool wrapper = wrappers.contains(program) || program.startsWith("python3.");
    if (wrapper && words.size() > 1 && !words[1].startsWith('-'))
        return QString::fromStdString(std::filesystem::path(words[1].toStdString()).filename().string());
    return program;
}

namespace {

QString provenance_text(const Provenance& from) {
    const QString source = QString::fromUtf8(to_string(from.source).data(), static_cast<int>(to_string(from.source).size()));
    return from.detail.empty() ? source : source + ": " + QString::fromStdString(from.detail).toHtmlEscaped();
}

}  // namespace

LegendKind FloorplanScene::legend_kind(int index) const {
    const int owner_count = static_cast<int>(owners.size());
    if (index < owner_count) return LegendKind::owner;
    if (index == owner_count) return LegendKind::free;
    if (index == owner_count + 1) return LegendKind::shared;
    return LegendKind::hole;
}

std::vector<const FloorplanOwner*> FloorplanScene::owners_of(int tpc_key) const {
    std::vector<const FloorplanOwner*> result;
    if (tpc_key < 0 || tpc_key >= TpcMask::kWidth) return result;  // a TPC no mask can name yet
    for (const FloorplanOwner& owner : owners)
        if (owner.mask.test(tpc_key)) result.push_back(&owner);
    return result;
}

const FloorplanGrant* FloorplanScene::grant_of(int tpc_key) const {
    if (tpc_key < 0 || tpc_key >= TpcMask::kWidth) return nullptr;
    for (const FloorplanGrant& grant : grants)
        if (grant.tpcs.test(tpc_key)) return &grant;
    return nullptr;
}

std::vector<FloorplanGrant> grants_from_smlp(const SystemState& state) {
    std::vector<FloorplanGrant> grants;
    for (const SmlpEntry& entry : state.smlp) {
        if (!entry.component || (!entry.component->gpu.empty() && entry.component->gpu != state.gpu_uuid)) continue;
        for (const SmlpRequest& r : entry.component->sq) {
            const ProcessState* process = find_process(state, r.pid);
            grants.push_back({plain_text(entry.component->name), QString("%1 (%2)").arg(r.pid).arg(plain_text(r.label)),
                              process != nullptr ? owner_color(process->pid, process->start_time) : QColor(0x75, 0x75, 0x75),
                              r.granted, r.liveness == Liveness::alive});
        }
    }
    return grants;
}

std::vector<FloorplanOwner> owners_from_state(const SystemState& state) {
    std::vector<FloorplanOwner> owners;
    for (const ProcessState& process : state.processes) {
        if (!process.partitioned) continue;
        const OwnerMark mark = owner_mark(process.pid, process.start_time);
        owners.push_back({process.pid, process.start_time,
                          QString::number(process.pid) + " " + short_command(process.command),
                          owner_palette_color(mark.index), process.mask, owner_letter_of(mark)});
    }
    return owners;
}

std::vector<FloorplanOwner> owners_from_gpu(const Gpu& gpu) {
    // The letters top would give these processes seen together (pid order), and their colours.
    OwnerLetters letters;
    std::vector<OwnerLetters::Alive> alive;
    for (const Process& process : gpu.processes) alive.push_back({process.pid, process.start_time.value_or(0), {}});
    letters.update(alive);
    std::vector<FloorplanOwner> owners;
    for (const Process& process : gpu.processes) {
        if (!process.tpc_mask) continue;
        const std::uint64_t start = process.start_time.value_or(0);
        const OwnerMark mark = letters.mark(process.pid, start);
        owners.push_back({process.pid, start, QString::number(process.pid) + " " + short_command(process.command),
                          owner_palette_color(mark.index), *process.tpc_mask, owner_letter_of(mark)});
    }
    return owners;
}

QString floorplan_tooltip(const FloorplanScene& scene, int tpc_key) {
    const Gpu& gpu = *scene.gpu;
    if (is_hole_key(tpc_key)) {
        for (const Hole& hole : gpu.holes)
            if (hole_key(hole.mask_bit) == tpc_key)
                return QString("<b>floorswept slot</b><br>no TPC here, so no TPC number: masks never name it<br><i>source</i> %1")
                    .arg(provenance_text(hole.from));
        return {};
    }
    if (tpc_key < 0) {  // FloorplanGeometry's key of a TPC whose number is not known: -1 - its index
        const auto index = static_cast<std::size_t>(-1 - tpc_key);
        if (index >= gpu.tpcs.size()) return {};
        const Tpc& unknown = gpu.tpcs[index];
        QStringList sms;
        for (const int sm : unknown.sms) sms << QString::number(sm);
        return QString("<b>TPC with no known number</b><br>SMs %1 (a TPC's number k needs its SMs 2k and 2k+1)<br><i>source</i> %2")
            .arg(sms.isEmpty() ? QString("not known") : sms.join(", "), provenance_text(unknown.from));
    }
    const Tpc* tpc = find_tpc(gpu, tpc_key);
    if (tpc == nullptr) return {};
    QStringList sms;
    for (const int sm : tpc->sms) sms << QString::number(sm);
    QString text = QString("<b>TPC %1</b><br>").arg(tpc_key);
    if (tpc->gpc) {
        const Gpc& gpc = gpu.gpcs.at(static_cast<std::size_t>(*tpc->gpc));
        text += QString("GPC %1").arg(*tpc->gpc);
        if (gpc.physical_id) text += QString(" (physical %1)").arg(*gpc.physical_id);
        if (tpc->slot) text += QString(", slot %1").arg(*tpc->slot);
        text += "<br>";
    } else {
        text += QString("GPC not determined: %1<br>").arg(QString::fromStdString(tpc->gpc_note).toHtmlEscaped());
    }
    text += QString("SMs %1<br>").arg(sms.join(", "));
    const auto owners = scene.owners_of(tpc_key);
    if (owners.empty()) {
        text += "owner: none (free; unpartitioned processes may run here)<br>";
    } else {
        QStringList names;
        for (const FloorplanOwner* owner : owners) names << owner->label.toHtmlEscaped();
        text += QString("%1: %2%3<br>")
                    .arg(owners.size() == 1 ? "owner" : "owners (shared)")
                    .arg(names.join(", "))
                    .arg(owners.size() > 1 ? " — they time-slice or contend on this TPC" : "");
    }
    if (const FloorplanGrant* grant = scene.grant_of(tpc_key))
        text += QString("SMLP %1: held by %2%3<br>").arg(grant->component.toHtmlEscaped(), grant->holder.toHtmlEscaped(),
                                                         grant->alive ? "" : " (exited: returned at the next change)");
    text += QString("<i>source</i> %1").arg(provenance_text(tpc->from));
    if (tpc->gpc && !tpc->gpc_note.empty())
        text += QString("<br><i>GPC from</i> %1").arg(QString::fromStdString(tpc->gpc_note).toHtmlEscaped());
    return text;
}

}  // namespace gpupart::widgets
