#include "sources/probe_model.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "sources/probe_analysis.hpp"

namespace gpupart {
namespace {

SourceStatus probe_status(SourceState state, std::string detail) { return SourceStatus{Source::probe, state, std::move(detail)}; }

void sort_tpcs(Gpu& gpu) {
    std::stable_sort(gpu.tpcs.begin(), gpu.tpcs.end(), [](const Tpc& a, const Tpc& b) {
        if (a.mask_bit.has_value() != b.mask_bit.has_value()) return a.mask_bit.has_value();
        if (a.mask_bit) return *a.mask_bit < *b.mask_bit;
        return std::pair(a.gpc, a.slot) < std::pair(b.gpc, b.slot);
    });
}

}  // namespace

SourceStatus apply_probe(const ProbeReport& report, const std::vector<SmOrderEntry>& sm_order, const std::string& where, Gpu& gpu) {
    const ProbeMap map = analyse_probe(report);
    if (!map.consistent()) return probe_status(SourceState::failed, fmt::format("{}: {}", where, map.problems.front()));
    const Provenance from{Source::probe, fmt::format("{} (one mask bit at a time, %smid per block)", where)};
    if (report.mask_width != 64 && report.mask_width != 128)
        return probe_status(SourceState::failed, fmt::format("{}: a {}-bit mask is neither 64 nor 128 bits", where, report.mask_width));

    if (gpu.tpcs.empty()) {  // no TPC layout from the driver: the probe's TPCs, GPC not determined
        for (const ProbeBit& bit : map.tpcs)
            gpu.tpcs.push_back(Tpc{bit.mask_bit, std::nullopt, std::nullopt, bit.sms, from,
                                   "GPC not determined: no driver source gave the GPC layout", {}});
    } else {
        if (!sm_order.empty()) {
            const ProbeJoin join = join_with_sm_order(map, sm_order);
            if (!join.agrees())
                return probe_status(SourceState::failed, fmt::format("{} disagrees with the driver's SM order: {} ({} conflict{})", where,
                                                                     join.conflicts.front(), join.conflicts.size(),
                                                                     join.conflicts.size() == 1 ? "" : "s"));
        }
        std::map<std::vector<int>, Tpc*> tpc_of_sms;
        for (Tpc& tpc : gpu.tpcs) {
            std::vector<int> sms = tpc.sms;
            std::sort(sms.begin(), sms.end());
            tpc_of_sms[sms] = &tpc;
        }
        std::map<Tpc*, int> bit_of;
        for (const ProbeBit& bit : map.tpcs) {
            std::vector<int> sms = bit.sms;
            std::sort(sms.begin(), sms.end());
            const auto it = tpc_of_sms.find(sms);
            if (it == tpc_of_sms.end())
                return probe_status(SourceState::failed, fmt::format("{}: bit {} drives SMs {}, which no TPC of the driver's layout holds",
                                                                     where, bit.mask_bit, fmt::join(bit.sms, ",")));
            bit_of[it->second] = bit.mask_bit;
        }
        if (bit_of.size() != gpu.tpcs.size())
            return probe_status(SourceState::failed, fmt::format("{}: {} TPC bits for the driver's {} TPCs", where, bit_of.size(), gpu.tpcs.size()));
        for (auto& [tpc, bit] : bit_of) {
            tpc->mask_bit = bit;
            tpc->mask_bit_note.clear();
            tpc->from.detail += fmt::format("; mask bit from the probe ({})", where);
        }
    }
    gpu.descriptor_version = known_fact(report.descriptor_version, from);
    if (report.stream_mask_offset >= 0)
        gpu.stream_mask_offset = known_fact(report.stream_mask_offset,
                                            Provenance{from.source, fmt::format("{}: {}", where, report.stream_mask_note)});
    gpu.mask_width = report.mask_width;
    sort_tpcs(gpu);
    gpu.holes.clear();
    for (int bit : map.holes) gpu.holes.push_back(Hole{bit, std::nullopt, std::nullopt, Provenance{from.source, from.detail + ": no block ran"}});
    std::erase_if(gpu.notes, [](const std::string& note) { return note.starts_with("TPC mask bits are not known yet"); });
    return probe_status(SourceState::ok, fmt::format("{}: {} TPC bits, {} holes, descriptor {:#x}; probed {} (CUDA {})", where, map.tpcs.size(),
                                                     map.holes.size(), report.descriptor_version, report.device.name,
                                                     report.device.cuda_driver_version));
}

}  // namespace gpupart
