#include "sources/probe_analysis.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace gpupart {

TpcMask ProbeMap::real_tpcs() const {
    TpcMask mask;
    for (const ProbeBit& bit : tpcs) mask.set(bit.mask_bit);
    return mask;
}

ProbeMap analyse_probe(const ProbeReport& report) {
    ProbeMap map;
    std::map<int, int> driver_of_sm;  // SM -> the first bit that drove it
    for (const auto& [bit, sms] : report.bit_sms) {
        if (sms.empty()) {
            map.holes.push_back(bit);
            continue;
        }
        map.tpcs.push_back(ProbeBit{bit, sms});
        for (int sm : sms) {
            if (sm < 0 || sm >= report.device.sm_count)
                map.problems.push_back(fmt::format("bit {} drove SM {}, but the GPU has SMs 0-{}", bit, sm,
                                                   report.device.sm_count - 1));
            const auto [it, first] = driver_of_sm.emplace(sm, bit);
            if (!first) map.problems.push_back(fmt::format("SM {} was driven by bit {} and by bit {}", sm, it->second, bit));
        }
    }
    std::vector<int> undriven;
    for (int sm = 0; sm < report.device.sm_count; ++sm)
        if (!driver_of_sm.contains(sm)) undriven.push_back(sm);
    if (!undriven.empty())
        map.problems.push_back(fmt::format("no mask bit drove SM(s) {}", fmt::join(undriven, " ")));
    return map;
}

std::map<int, std::vector<int>> ProbeJoin::bits_by_gpc() const {
    std::map<int, std::vector<std::pair<int, int>>> by_gpc;  // gpc -> (local tpc, bit)
    for (const BitPlacement& placed : bits)
        if (placed.logical_gpc && placed.local_tpc) by_gpc[*placed.logical_gpc].emplace_back(*placed.local_tpc, placed.mask_bit);
    std::map<int, std::vector<int>> out;
    for (auto& [gpc, pairs] : by_gpc) {
        std::sort(pairs.begin(), pairs.end());
        for (const auto& pair : pairs) out[gpc].push_back(pair.second);
    }
    return out;
}

ProbeJoin join_with_sm_order(const ProbeMap& map, const std::vector<SmOrderEntry>& sm_order) {
    ProbeJoin join;
    std::map<int, const SmOrderEntry*> entry_of_sm;
    for (const SmOrderEntry& entry : sm_order) entry_of_sm.emplace(entry.sm, &entry);
    std::map<int, int> bit_of_global_tpc;
    for (const ProbeBit& bit : map.tpcs) {
        BitPlacement placed{bit.mask_bit, bit.sms, {}, {}, {}, {}, {}};
        std::set<std::pair<int, int>> tpcs_seen;  // (logical gpc, local tpc) of the bit's SMs
        std::vector<int> unknown;
        const SmOrderEntry* first = nullptr;
        for (int sm : bit.sms) {
            const auto it = entry_of_sm.find(sm);
            if (it == entry_of_sm.end()) {
                unknown.push_back(sm);
                continue;
            }
            if (first == nullptr) first = it->second;
            tpcs_seen.emplace(it->second->logical_gpc, it->second->local_tpc);
        }
        if (!unknown.empty()) {
            placed.note = fmt::format("SM(s) {} are not in the SM order", fmt::join(unknown, " "));
            join.conflicts.push_back(fmt::format("bit {}: {}", bit.mask_bit, placed.note));
        } else if (tpcs_seen.size() > 1) {
            placed.note = "its SMs belong to different TPCs in the SM order";
            join.conflicts.push_back(fmt::format("bit {}: SMs {} belong to {} different TPCs in the SM order", bit.mask_bit,
                                                 fmt::join(bit.sms, " "), tpcs_seen.size()));
        } else {
            placed.logical_gpc = first->logical_gpc;
            placed.local_tpc = first->local_tpc;
            placed.global_tpc = first->global_tpc;
            if (first->virtual_gpc >= 0) placed.virtual_gpc = first->virtual_gpc;
            const auto [it, inserted] = bit_of_global_tpc.emplace(first->global_tpc, bit.mask_bit);
            if (!inserted)
                join.conflicts.push_back(fmt::format("bits {} and {} both drive global TPC {}", it->second, bit.mask_bit,
                                                     first->global_tpc));
        }
        join.bits.push_back(std::move(placed));
    }
    std::set<int> order_tpcs;
    for (const SmOrderEntry& entry : sm_order) order_tpcs.insert(entry.global_tpc);
    std::vector<int> unprobed;
    for (int tpc : order_tpcs)
        if (!bit_of_global_tpc.contains(tpc)) unprobed.push_back(tpc);
    if (!unprobed.empty())
        join.conflicts.push_back(fmt::format("global TPC(s) {} of the SM order are driven by no mask bit", fmt::join(unprobed, " ")));
    return join;
}

}  // namespace gpupart
