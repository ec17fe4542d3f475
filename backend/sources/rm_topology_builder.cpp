#include "sources/rm_topology_builder.hpp"

#include <bit>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sources/rm_gpu_builder.hpp"

namespace gpupart {
namespace {


using TpcKey = std::pair<int, int>;  // (logical GPC, TPC index inside it)

// Why the SM order cannot be laid onto the physical floorplan, or empty when every control agrees:
// the GPC map covers the physical GPCs once, each logical GPC's TPC count and mask match its physical
// GPC's, and every SM names a TPC that exists.
std::string sm_order_problem(const RmFacts& facts) {
    if (!facts.gpc_map.ok()) return facts.gpc_map.why_not;
    if (!facts.sm_order.ok()) return facts.sm_order.why_not;
    const RmGpcMap& map = *facts.gpc_map.value;
    std::set<int> physical_seen;
    for (const auto& [logical, physical] : map.physical_of_logical) {
        const auto mask = facts.tpc_mask.find(physical);
        if (mask == facts.tpc_mask.end()) return fmt::format("logical GPC {} maps to physical GPC {}, which GR_GET_GPC_MASK lacks", logical, physical);
        if (!mask->second.ok()) return mask->second.why_not;
        if (!physical_seen.insert(physical).second) return fmt::format("two logical GPCs map to physical GPC {}", physical);
        const auto count = facts.tpc_count.find(logical);
        if (count == facts.tpc_count.end() || !count->second.ok())
            return count == facts.tpc_count.end() ? fmt::format("no TPC count for logical GPC {}", logical) : count->second.why_not;
        if (static_cast<int>(*count->second.value) != std::popcount(*mask->second.value))
            return fmt::format("logical GPC {} has {} TPCs but physical GPC {}'s mask 0x{:x} has {}", logical, *count->second.value,
                               physical, *mask->second.value, std::popcount(*mask->second.value));
        if (auto grfs = map.tpc_mask_of_logical.find(logical); grfs != map.tpc_mask_of_logical.end() && grfs->second != *mask->second.value)
            return fmt::format("GRMGR_GET_GR_FS_INFO gives logical GPC {} TPC mask 0x{:x}, GR_GET_TPC_MASK physical GPC {} 0x{:x}",
                               logical, grfs->second, physical, *mask->second.value);
    }
    if (physical_seen.size() != facts.tpc_mask.size()) return "GRMGR_GET_GR_FS_INFO does not map every physical GPC";
    const rm580::SmOrder& order = *facts.sm_order.value;
    std::set<TpcKey> tpcs;
    for (const SmOrderEntry& entry : order.entries) {
        const auto physical = map.physical_of_logical.find(entry.logical_gpc);
        if (physical == map.physical_of_logical.end()) return fmt::format("SM {} is in logical GPC {}, which has no physical GPC", entry.sm, entry.logical_gpc);
        if (entry.local_tpc >= std::popcount(*facts.tpc_mask.at(physical->second).value))
            return fmt::format("SM {} is in TPC {} of logical GPC {}, which has fewer TPCs", entry.sm, entry.local_tpc, entry.logical_gpc);
        tpcs.insert({entry.logical_gpc, entry.local_tpc});
    }
    if (static_cast<int>(tpcs.size()) != order.tpc_count)
        return fmt::format("the SM order names {} TPCs but says it has {}", tpcs.size(), order.tpc_count);
    return {};
}

}  // namespace

std::optional<std::uint32_t> gr_info_value(const RmFacts& facts, std::uint32_t index) {
    if (!facts.gr_info.ok()) return std::nullopt;
    const auto it = facts.gr_info.value->find(index);
    if (it == facts.gr_info.value->end()) return std::nullopt;
    return it->second;
}

void add_rm_topology(const RmFacts& facts, Gpu& gpu) {
    if (facts.smc_mode.value == rm580::SmcMode::enabled) {
        gpu.notes.push_back("MIG is on: the GR topology controls answer only inside a GPU instance this reader would have to "
                            "subscribe to, which gpupart does not do yet; GPCs, TPCs and SMs are not shown.");
        return;
    }
    if (!facts.gpc_mask.ok()) {
        gpu.notes.push_back("GPC layout not known: " + facts.gpc_mask.why_not);
        return;
    }
    if (facts.sm_order.ok()) gpu.sm_count = known_fact(facts.sm_order.value->sm_count, from_rm("GR_GET_GLOBAL_SM_ORDER (numSm)"));
    else gpu.sm_count = unknown_fact<int>(facts.sm_order.why_not, from_rm("GR_GET_GLOBAL_SM_ORDER"));

    std::map<int, int> logical_of_physical;
    if (facts.gpc_map.ok())
        for (const auto& [logical, physical] : facts.gpc_map.value->physical_of_logical) logical_of_physical[physical] = logical;
    const std::string problem = sm_order_problem(facts);
    std::map<TpcKey, std::vector<int>> sms_of_tpc;
    if (problem.empty())
        for (const SmOrderEntry& entry : facts.sm_order.value->entries) sms_of_tpc[{entry.logical_gpc, entry.local_tpc}].push_back(entry.sm);
    else
        gpu.notes.push_back("SMs are not placed on TPCs: " + problem);

    const int litter_slots = static_cast<int>(gr_info_value(facts, rm580::kGrInfoLitterNumTpcPerGpc).value_or(0));
    for (const auto& [physical, mask] : facts.tpc_mask) {
        const int index = static_cast<int>(gpu.gpcs.size());
        const auto logical = logical_of_physical.count(physical) ? std::optional(logical_of_physical.at(physical)) : std::nullopt;
        const int width = mask.ok() ? static_cast<int>(std::bit_width(*mask.value)) : 0;
        gpu.gpcs.push_back(Gpc{index, physical, logical, std::max(litter_slots, width),
                               from_rm(fmt::format("GR_GET_GPC_MASK 0x{:x}; {} TPC slots (LITTER_NUM_TPC_PER_GPC, GR_GET_INFO_V2)",
                                              *facts.gpc_mask.value, std::max(litter_slots, width)))});
        if (!mask.ok()) {
            gpu.notes.push_back(fmt::format("TPCs of physical GPC {} not known: {}", physical, mask.why_not));
            continue;
        }
        int local = 0;  // the driver numbers a GPC's TPCs in the order of its physical mask, floorswept slots skipped
        for (int slot = 0; slot < width; ++slot) {
            if (!(*mask.value & (1u << slot))) continue;
            Tpc tpc;
            tpc.gpc = index;
            tpc.slot = slot;
            tpc.mask_bit_note = kMaskBitsNeedProbe;
            tpc.gpc_note = logical ? fmt::format("physical GPC {} slot {}; the driver's logical GPC {} TPC {}", physical, slot, *logical, local)
                                   : fmt::format("physical GPC {} slot {}", physical, slot);
            if (problem.empty() && logical) tpc.sms = sms_of_tpc[{*logical, local}];
            tpc.from = from_rm(tpc.sms.empty() ? "GR_GET_TPC_MASK"
                                               : "GR_GET_TPC_MASK; SMs from GR_GET_GLOBAL_SM_ORDER via GRMGR_GET_GR_FS_INFO");
            gpu.tpcs.push_back(std::move(tpc));
            ++local;
        }
    }
    gpu.notes.push_back("TPC mask bits are not known yet: " + std::string(kMaskBitsNeedProbe) + ".");
    gpu.notes.push_back("GPCs are the physical GPCs; '.' slots are floorswept TPCs (GR_GET_TPC_MASK). A TPC's slot assumes the "
                        "driver numbers a GPC's TPCs in physical-mask order, floorswept slots skipped.");
    gpu.notes.push_back("SM ids are positions in the driver's global SM order; that they equal %smid is for the probe to confirm.");
}

}  // namespace gpupart
