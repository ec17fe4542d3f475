#include "report/topology_text.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "report/engines_text.hpp"
#include "report/fact_text.hpp"

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


// The provenance most items share: one line that is true of the section, without listing every item.
template <typename T>
Provenance most_common_provenance(const std::vector<T>& items) {
    std::map<std::pair<Source, std::string>, int> counts;
    for (const T& item : items) ++counts[{item.from.source, item.from.detail}];
    auto best = std::max_element(counts.begin(), counts.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    return Provenance{best->first.first, best->first.second};
}

// One GPC (or the TPCs of no known GPC) as two lines of cells: TPC numbers, then SM ids.
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
        const std::optional<int> number = tpc_number(*tpc);
        bits[at] = number ? fmt::format("{}", *number) : "?";
        sms[at] = sm_label(tpc->sms);
        ++tpc_count;
        sm_count += static_cast<int>(tpc->sms.size());
    }
    out += fmt::format("{:<7}{:>4} {:>4}   TPC ", label, tpc_count, sm_count);
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
    const bool bits_known = mask_bits_known(gpu);
    bool numbers_known = true;
    for (const Tpc& tpc : gpu.tpcs) numbers_known = numbers_known && tpc_number(tpc).has_value();
    out += fmt::format("{:<7}{:>4} {:>4}   TPC slots: TPC number (TPC k = SMs 2k and 2k+1) above its SM ids; {}'.' = no TPC "
                       "(floorswept)\n", "GPC", "TPCs", "SMs", numbers_known ? "" : "'?' = number not known; ");
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
    if (!bits_known) {
        out += fmt::format("launch-descriptor bits: not known ({}); masks cannot be applied yet\n", mask_bits_unknown_reason(gpu));
        return;
    }
    const TpcMask holes = hole_bits(gpu);
    out += fmt::format("launch-descriptor bits: known for every TPC (`gpupart topology --sources` lists each TPC's bit); {} of "
                       "{} bits are holes: {}\n", holes.count(), gpu.mask_width, holes.empty() ? "none" : holes.to_list());
}

// "gpc5 = physical 6 / logical 5": the driver's ids behind gpupart's GPC names, when a source gave them.
void append_gpc_ids(std::string& out, const Gpu& gpu) {
    std::vector<std::string> ids;
    for (const Gpc& gpc : gpu.gpcs) {
        if (!gpc.physical_id && !gpc.logical_id) continue;
        std::string text = gpc_name(gpc.index) + " =";
        if (gpc.physical_id) text += fmt::format(" physical {}", *gpc.physical_id);
        if (gpc.physical_id && gpc.logical_id) text += " /";
        if (gpc.logical_id) text += fmt::format(" logical {}", *gpc.logical_id);
        ids.push_back(std::move(text));
    }
    if (!ids.empty()) out += fmt::format("GPC ids: {}\n", fmt::join(ids, ", "));
}

}  // namespace

std::string topology_summary(const Gpu& gpu) {
    if (gpu.tpcs.empty() && gpu.gpcs.empty()) return "no TPC layout known";
    const int undetermined = undetermined_gpc_tpcs(gpu).count();
    const std::string counts = fmt::format("{} TPCs, {} SMs, {} GPCs{}", gpu.tpcs.size(), sm_total(gpu), gpu.gpcs.size(),
                                           undetermined ? fmt::format(" (+{} TPCs of undetermined GPC)", undetermined)
                                                        : std::string());
    if (!gpu.tpcs.empty() && !mask_bits_known(gpu)) return counts + ", TPC mask bits not known";
    return fmt::format("{}, {} holes in the {}-bit TPC mask", counts, gpu.holes.size(), gpu.mask_width);
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
        lines.push_back(fmt::format("LCE{} and LCE{} share PCEs {}: their copies interfere (Bakita & Anderson, RTAS 2024, rule R8)", pair.lce_a,
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
    append_gpc_ids(out, gpu);
    if (!gpu.tpcs.empty()) out += fmt::format("source: {}\n", provenance_text(most_common_provenance(gpu.tpcs)));
    out += "\n" + engines_text(gpu);
    out += "\n" + copy_engines_text(gpu);
    if (!gpu.processes.empty()) {
        out += "\nProcesses using the GPU\n";
        for (const Process& process : gpu.processes)
            out += fmt::format("  pid {:<8} {}\n", process.pid, process.command.empty() ? "?" : process.command);
        out += fmt::format("  source: {}\n", provenance_text(gpu.processes.front().from));
    }
    if (!gpu.notes.empty()) {
        out += "\nNotes\n";
        for (const auto& note : gpu.notes) out += "  - " + note + "\n";
    }
    return out;
}

}  // namespace gpupart
