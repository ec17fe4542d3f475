#include "report/topology_text.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"

namespace gpupart {

std::string pce_list(std::uint32_t mask) {
    const TpcMask bits = TpcMask::from_words(mask, 0);
    return bits.empty() ? "none" : bits.to_list();
}

namespace {

constexpr int kCell = 8;

std::string sm_label(const std::vector<int>& sms) {
    if (sms.empty()) return "?";
    if (sms.size() == 2 && sms[1] == sms[0] + 1) return fmt::format("{}-{}", sms[0], sms[1]);
    return fmt::format("{}", fmt::join(sms, ","));
}


template <typename T>
std::string fact_text(const Fact<T>& fact) {
    if (fact.known()) return fmt::format("{}", *fact.value);
    return fact.unknown_reason.empty() ? "unknown" : fact.unknown_reason;
}

std::string provenance_text(const Provenance& from) {
    return from.detail.empty() ? std::string(to_string(from.source))
                               : fmt::format("{}: {}", to_string(from.source), from.detail);
}

// The provenance most items share: one line that is true of the section, without listing every item.
template <typename T>
Provenance most_common_provenance(const std::vector<T>& items) {
    std::map<std::pair<Source, std::string>, int> counts;
    for (const T& item : items) ++counts[{item.from.source, item.from.detail}];
    auto best = std::max_element(counts.begin(), counts.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    return Provenance{best->first.first, best->first.second};
}

// One GPC (or the TPCs of no known GPC) as two lines of cells: mask bits, then SM ids.
// Slots no TPC takes keep their "." cells: they are the holes.
void append_row(std::string& out, const std::string& label, const std::vector<const Tpc*>& tpcs, int slots) {
    std::vector<std::string> bits(static_cast<std::size_t>(slots), ".");
    std::vector<std::string> sms(static_cast<std::size_t>(slots), ".");
    int tpc_count = 0;
    int sm_count = 0;
    std::size_t next_free = 0;
    auto place = [&](std::optional<int> slot) -> std::size_t {
        if (slot) return static_cast<std::size_t>(*slot);
        while (next_free < bits.size() && bits[next_free] != ".") ++next_free;
        return next_free;
    };
    for (const Tpc* tpc : tpcs) {
        const std::size_t at = place(tpc->slot);
        if (at >= bits.size()) continue;
        bits[at] = fmt::format("{}", tpc->mask_bit);
        sms[at] = sm_label(tpc->sms);
        ++tpc_count;
        sm_count += static_cast<int>(tpc->sms.size());
    }
    out += fmt::format("{:<7}{:>4} {:>4}   bit ", label, tpc_count, sm_count);
    for (const auto& cell : bits) out += fmt::format("{:>{}}", cell, kCell);
    out += fmt::format("\n{:<7}{:>4} {:>4}   SMs ", "", "", "");
    for (const auto& cell : sms) out += fmt::format("{:>{}}", cell, kCell);
    out += "\n";
}

void append_floorplan(std::string& out, const Gpu& gpu) {
    if (gpu.tpcs.empty()) {
        out += "TPC layout: not known for this GPU (no source gave one)\n";
        return;
    }
    out += fmt::format("{:<7}{:>4} {:>4}   TPC slots: mask bit above its SM ids; '.' = hole (no TPC)\n", "GPC", "TPCs", "SMs");
    for (const Gpc& gpc : gpu.gpcs) {
        std::vector<const Tpc*> tpcs;
        for (const Tpc& tpc : gpu.tpcs)
            if (tpc.gpc == gpc.index) tpcs.push_back(&tpc);
        append_row(out, gpc_name(gpc.index), tpcs, gpc.tpc_slots);
    }
    std::vector<const Tpc*> unplaced;
    for (const Tpc& tpc : gpu.tpcs)
        if (!tpc.gpc) unplaced.push_back(&tpc);
    if (!unplaced.empty()) {
        append_row(out, "no GPC", unplaced, static_cast<int>(unplaced.size()));
        out += fmt::format("       ({})\n", unplaced.front()->gpc_note);
    }
    const TpcMask holes = hole_bits(gpu);
    out += fmt::format("holes: {} of {} mask bits have no TPC: {}\n", holes.count(), gpu.mask_width,
                       holes.empty() ? "none" : holes.to_list());
}

void append_engines(std::string& out, const Gpu& gpu) {
    if (gpu.engines.empty()) {
        out += "\nEngines: not known for this GPU\n";
        return;
    }
    out += "\nEngines by runlist (seed 003 R6: a runlist may serve several engines; R7: an engine has one runlist)\n";
    std::map<int, std::vector<std::string>> by_runlist;
    std::map<std::string, std::vector<std::string>> unknown;  // reason -> engines
    for (const Engine& engine : gpu.engines) {
        std::string name = engine.name;
        if (engine.kind == EngineKind::copy && engine.instance < 2 && !gpu.copy_engines.lces.empty()) {
            for (const auto& lce : gpu.copy_engines.lces)
                if (lce.index == engine.instance && lce.grce) name += " (GRCE)";
        }
        if (engine.runlist.known())
            by_runlist[*engine.runlist.value].push_back(name);
        else
            unknown[engine.runlist.unknown_reason].push_back(name);
    }
    for (const Runlist& runlist : gpu.runlists)
        if (!by_runlist.count(runlist.id)) by_runlist[runlist.id];
    for (const auto& [id, names] : by_runlist)
        out += fmt::format("  runlist {:<4} {}\n", id, names.empty() ? "(no engine named)" : fmt::format("{}", fmt::join(names, ", ")));
    for (const auto& [reason, names] : unknown)
        out += fmt::format("  runlist ?    {}: {}\n", fmt::join(names, ", "), reason.empty() ? "unknown" : reason);
    out += fmt::format("  source: {}\n", provenance_text(gpu.engines.front().from));
}

void append_copy_engines(std::string& out, const Gpu& gpu) {
    if (gpu.copy_engines.lces.empty()) {
        out += fmt::format("\nCopy engines (LCE -> PCE): {}\n", fact_text(gpu.copy_engines.pce_count));
        return;
    }
    out += fmt::format("\nCopy engines: LCE -> PCE wiring ({} PCEs)\n", fact_text(gpu.copy_engines.pce_count));
    for (const auto& lce : gpu.copy_engines.lces) {
        std::string caps = lce.grce ? "GRCE" : "";
        if (lce.shared) caps += caps.empty() ? "shared" : " shared";
        out += fmt::format("  LCE{:<3} {:<12} PCEs {}\n", lce.index, caps, pce_list(lce.pce_mask));
    }
    for (const auto& line : shared_copy_engine_lines(gpu)) out += "  ! " + line + "\n";
    out += fmt::format("  source: {}\n", provenance_text(gpu.copy_engines.lces.front().from));
}

}  // namespace

std::string topology_summary(const Gpu& gpu) {
    const int undetermined = undetermined_gpc_tpcs(gpu).count();
    return fmt::format("{} TPCs, {} SMs, {} GPCs{}, {} holes in the {}-bit TPC mask", gpu.tpcs.size(), sm_total(gpu),
                       gpu.gpcs.size(),
                       undetermined ? fmt::format(" (+{} TPCs of undetermined GPC)", undetermined) : std::string(),
                       gpu.holes.size(), gpu.mask_width);
}

std::string SharedCopyEngines::pce_list() const { return gpupart::pce_list(pces); }

std::vector<SharedCopyEngines> shared_copy_engines(const Gpu& gpu) {
    std::vector<SharedCopyEngines> shared;
    const auto& lces = gpu.copy_engines.lces;
    for (std::size_t a = 0; a < lces.size(); ++a)
        for (std::size_t b = a + 1; b < lces.size(); ++b)
            if (const std::uint32_t common = lces[a].pce_mask & lces[b].pce_mask; common != 0)
                shared.push_back({lces[a].index, lces[b].index, common});
    return shared;
}

std::vector<std::string> shared_copy_engine_lines(const Gpu& gpu) {
    std::vector<std::string> lines;
    for (const auto& pair : shared_copy_engines(gpu))
        lines.push_back(fmt::format("LCE{} and LCE{} share PCEs {}: their copies interfere (seed 003 R8)", pair.lce_a,
                                    pair.lce_b, pair.pce_list()));
    return lines;
}

std::string topology_text(const Gpu& gpu) {
    std::string out;
    out += fmt::format("GPU {}: {}", gpu.index, gpu_display_name(gpu));
    if (gpu.architecture.known()) out += " · " + *gpu.architecture.value;
    if (gpu.compute_capability.known()) out += " (sm " + *gpu.compute_capability.value + ")";
    if (gpu.driver_version.known()) out += " · driver " + *gpu.driver_version.value;
    if (gpu.cuda_version.known()) out += " · CUDA " + *gpu.cuda_version.value;
    if (gpu.pci_bus_id.known()) out += " · PCI " + *gpu.pci_bus_id.value;
    out += "\n" + topology_summary(gpu);
    if (gpu.sm_count.known()) out += fmt::format(" · CUDA reports {} SMs", *gpu.sm_count.value);
    if (gpu.descriptor_version.known()) out += fmt::format(" · launch descriptor 0x{:02x}", *gpu.descriptor_version.value);
    out += "\n\n";
    append_floorplan(out, gpu);
    if (!gpu.tpcs.empty()) out += fmt::format("source: {}\n", provenance_text(most_common_provenance(gpu.tpcs)));
    append_engines(out, gpu);
    append_copy_engines(out, gpu);
    if (!gpu.notes.empty()) {
        out += "\nNotes\n";
        for (const auto& note : gpu.notes) out += "  - " + note + "\n";
    }
    return out;
}

}  // namespace gpupart
