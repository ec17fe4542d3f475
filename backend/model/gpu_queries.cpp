#include "model/gpu_queries.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "model/tpc_numbering.hpp"

namespace gpupart {

std::string gpc_name(int gpc_index) { return fmt::format("gpc{}", gpc_index); }

std::string gpu_display_name(const Gpu& gpu) {
    return gpu.name.known() ? *gpu.name.value : fmt::format("GPU {}", gpu.index);
}

TpcMask real_tpcs(const Gpu& gpu) {
    TpcMask mask;
    for (const Tpc& tpc : gpu.tpcs)
        if (const auto number = tpc_number(tpc)) mask.set(*number);
    return mask;
}

bool mask_bits_known(const Gpu& gpu) {
    if (gpu.tpcs.empty()) return false;
    for (const Tpc& tpc : gpu.tpcs)
        if (!tpc.mask_bit) return false;
    return true;
}

std::string mask_bits_unknown_reason(const Gpu& gpu) {
    if (gpu.tpcs.empty()) return "no source gave a TPC layout";
    for (const Tpc& tpc : gpu.tpcs)
        if (!tpc.mask_bit) return tpc.mask_bit_note.empty() ? "no source gave the TPCs' mask bits" : tpc.mask_bit_note;
    return {};
}

TpcMask hole_bits(const Gpu& gpu) {
    TpcMask mask;
    for (const Hole& hole : gpu.holes) mask.set(hole.mask_bit);
    return mask;
}

TpcMask gpc_tpcs(const Gpu& gpu, int gpc_index) {
    TpcMask mask;
    for (const Tpc& tpc : gpu.tpcs)
        if (const auto number = tpc_number(tpc); number && tpc.gpc == gpc_index) mask.set(*number);
    return mask;
}

TpcMask undetermined_gpc_tpcs(const Gpu& gpu) {
    TpcMask mask;
    for (const Tpc& tpc : gpu.tpcs)
        if (const auto number = tpc_number(tpc); number && !tpc.gpc) mask.set(*number);
    return mask;
}

const Tpc* find_tpc(const Gpu& gpu, int number) {
    for (const Tpc& tpc : gpu.tpcs)
        if (tpc_number(tpc) == number) return &tpc;  // an unknown number never equals one
    return nullptr;
}

const Tpc* find_tpc_by_bit(const Gpu& gpu, int mask_bit) {
    for (const Tpc& tpc : gpu.tpcs)
        if (tpc.mask_bit == mask_bit) return &tpc;
    return nullptr;
}

std::vector<int> sms_of(const Gpu& gpu, const TpcMask& mask) {
    std::set<int> sms;
    for (const Tpc& tpc : gpu.tpcs)
        if (const auto number = tpc_number(tpc); number && mask.test(*number)) sms.insert(tpc.sms.begin(), tpc.sms.end());
    return {sms.begin(), sms.end()};
}

int sm_total(const Gpu& gpu) {
    std::set<int> sms;  // every TPC's SMs, mask bit known or not
    for (const Tpc& tpc : gpu.tpcs) sms.insert(tpc.sms.begin(), tpc.sms.end());
    return static_cast<int>(sms.size());
}

std::vector<int> gpcs_fully_covered(const Gpu& gpu, const TpcMask& mask) {
    std::vector<int> covered;
    for (const Gpc& gpc : gpu.gpcs) {
        const TpcMask tpcs = gpc_tpcs(gpu, gpc.index);
        if (!tpcs.empty() && (tpcs & mask) == tpcs) covered.push_back(gpc.index);
    }
    return covered;
}

namespace {

std::optional<std::string> check_placement(const Gpu& gpu, const std::string& field, std::optional<int> gpc,
                                           std::optional<int> slot,
                                           std::set<std::pair<int, int>>& used_slots) {
    if (!gpc) {
        if (slot) return field + ".slot: a slot needs a GPC";
        return std::nullopt;
    }
    if (*gpc < 0 || *gpc >= static_cast<int>(gpu.gpcs.size()))
        return fmt::format("{}.gpc: GPC {} does not exist ({} GPCs)", field, *gpc, gpu.gpcs.size());
    if (!slot) return std::nullopt;
    const int slots = gpu.gpcs[static_cast<std::size_t>(*gpc)].tpc_slots;
    if (*slot < 0 || *slot >= slots)
        return fmt::format("{}.slot: slot {} outside gpc{}'s {} slots", field, *slot, *gpc, slots);
    if (!used_slots.insert({*gpc, *slot}).second)
        return fmt::format("{}.slot: gpc{} slot {} is used twice", field, *gpc, *slot);
    return std::nullopt;
}

}  // namespace

std::optional<std::string> find_inconsistency(const Gpu& gpu) {
    if (gpu.mask_width != 64 && gpu.mask_width != 128)
        return fmt::format("mask_width: {} is neither 64 nor 128", gpu.mask_width);
    for (std::size_t i = 0; i < gpu.gpcs.size(); ++i) {
        if (gpu.gpcs[i].index != static_cast<int>(i))
            return fmt::format("gpcs[{}].index: is {}, must equal its position", i, gpu.gpcs[i].index);
        if (gpu.gpcs[i].tpc_slots < 0 || gpu.gpcs[i].tpc_slots > gpu.mask_width)
            return fmt::format("gpcs[{}].tpc_slots: {} is out of range", i, gpu.gpcs[i].tpc_slots);
    }
    std::set<int> bits;
    std::set<int> sms;
    std::set<std::pair<int, int>> used_slots;
    int previous = -1;
    std::optional<std::pair<int, int>> previous_place;  // (gpc, slot) of the previous TPC with no mask bit
    for (std::size_t i = 0; i < gpu.tpcs.size(); ++i) {
        const Tpc& tpc = gpu.tpcs[i];
        const std::string field = fmt::format("tpcs[{}]", i);
        if (!tpc.mask_bit) {
            // TPCs with no mask bit come after those with one, in floorplan order; they need a place.
            if (!tpc.gpc || !tpc.slot) return field + ": a TPC with no mask bit needs its gpc and slot";
            const std::pair<int, int> place{*tpc.gpc, *tpc.slot};
            if (previous_place && place <= *previous_place)
                return field + ": TPCs with no mask bit must be sorted by gpc and slot";
            previous_place = place;
        } else {
            if (previous_place) return field + ".mask_bit: TPCs with a mask bit must come before those without";
            if (*tpc.mask_bit < 0 || *tpc.mask_bit >= gpu.mask_width)
                return fmt::format("{}.mask_bit: {} outside 0-{}", field, *tpc.mask_bit, gpu.mask_width - 1);
            if (*tpc.mask_bit <= previous) return field + ".mask_bit: TPCs must be sorted by mask bit, without repeats";
            previous = *tpc.mask_bit;
            bits.insert(*tpc.mask_bit);
        }
        if (auto problem = check_placement(gpu, field, tpc.gpc, tpc.slot, used_slots)) return problem;
        for (int sm : tpc.sms) {
            if (sm < 0) return fmt::format("{}.sms: negative SM id {}", field, sm);
            if (!sms.insert(sm).second) return fmt::format("{}.sms: SM {} belongs to two TPCs", field, sm);
        }
    }
    previous = -1;
    for (std::size_t i = 0; i < gpu.holes.size(); ++i) {
        const Hole& hole = gpu.holes[i];
        const std::string field = fmt::format("holes[{}]", i);
        if (hole.mask_bit < 0 || hole.mask_bit >= gpu.mask_width)
            return fmt::format("{}.mask_bit: {} outside 0-{}", field, hole.mask_bit, gpu.mask_width - 1);
        if (hole.mask_bit <= previous) return field + ".mask_bit: holes must be sorted by mask bit, without repeats";
        previous = hole.mask_bit;
        if (bits.count(hole.mask_bit))
            return fmt::format("{}.mask_bit: bit {} is listed both as a TPC and as a hole", field, hole.mask_bit);
        if (auto problem = check_placement(gpu, field, hole.gpc, hole.slot, used_slots)) return problem;
    }
    if (gpu.sm_count.known() && !gpu.tpcs.empty() && *gpu.sm_count.value < static_cast<int>(sms.size()))
        return fmt::format("sm_count: {} is less than the {} SMs the TPCs list", *gpu.sm_count.value, sms.size());
    std::set<std::string> engine_names;
    for (std::size_t i = 0; i < gpu.engines.size(); ++i)
        if (!engine_names.insert(gpu.engines[i].name).second)
            return fmt::format("engines[{}].name: engine {} is listed twice (each engine has one runlist, Bakita & Anderson, RTAS 2024, rule R7)",
                               i, gpu.engines[i].name);
    std::set<int> lces;
    for (std::size_t i = 0; i < gpu.copy_engines.lces.size(); ++i)
        if (!lces.insert(gpu.copy_engines.lces[i].index).second)
            return fmt::format("copy_engines.lces[{}].index: LCE{} is listed twice", i, gpu.copy_engines.lces[i].index);
    return std::nullopt;
}

std::string gpu_key(const Gpu& gpu) {
    if (gpu.uuid.value && gpu.uuid.value->size() == 40 && gpu.uuid.value->rfind("GPU-", 0) == 0) {
        std::string key = *gpu.uuid.value;  // NVML prints lowercase hex, as the registry does
        std::transform(key.begin() + 4, key.end(), key.begin() + 4, [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return key;
    }
    return fmt::format("GPU-00000000-0000-0000-0000-{:012x}", gpu.index + 1);
}

}  // namespace gpupart
