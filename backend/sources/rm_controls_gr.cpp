// Graphics controls: GPC and TPC floorsweeping, GR info, the logical -> physical GPC map and the
// global SM order (branch 580 layouts of NVIDIA's open-gpu-kernel-modules headers, ctrl2080gr.h).
#include <fmt/format.h>

#include "sources/rm_controls.hpp"

namespace gpupart::rm580 {
namespace {

// GR_GET_GPC_MASK / GR_GET_TPC_MASK: {GR_ROUTE_INFO (16 B, zero without MIG); gpcId @16; mask @16 or @20}.
constexpr std::size_t kGpcMaskAt = 16;
constexpr std::size_t kTpcGpcIdAt = 16;
constexpr std::size_t kTpcMaskAt = 20;
// GR_GET_NUM_TPCS_FOR_GPC: {gpcId @0 (logical); numTpcs @4}.
constexpr std::size_t kNumTpcsAt = 4;
// GR_GET_INFO_V2: {grInfoListSize @0; {index, data}[58] @4; route @472}.
constexpr std::size_t kGrInfoMaxEntries = 58;
constexpr std::size_t kGrInfoListAt = 4;
// GRMGR_GET_GR_FS_INFO: {u16 numQueries @0; 6 reserved; 20-byte queries @8}; a query is
// {u16 queryType @0; 2 reserved; u32 status @4; union @8: {u32 gpcId; u32 answer} or {u32 gpcCount}}.
constexpr std::size_t kGrfsMaxQueries = 96;
constexpr std::size_t kGrfsQueriesAt = 8;
constexpr std::size_t kGrfsQuerySize = 20;
// GR_GET_GLOBAL_SM_ORDER: 512 entries of nine u16 (18 B) @0, numSm @9216, numTpc @9218.
constexpr std::size_t kSmOrderMaxEntries = 512;
constexpr std::size_t kSmOrderEntrySize = 18;
constexpr std::size_t kSmOrderNumSmAt = 9216;
constexpr std::size_t kSmOrderNumTpcAt = 9218;
// Field order of an entry: gpcId, localTpcId, localSmId, globalTpcId, virtualGpcId, migratableTpcId,
// ugpuId, physicalCpcId, virtualTpcId.
constexpr std::size_t kSmGpcId = 0;
constexpr std::size_t kSmLocalTpcId = 2;
constexpr std::size_t kSmGlobalTpcId = 6;
constexpr std::size_t kSmVirtualGpcId = 8;

}  // namespace

Params tpc_mask_request(int physical_gpc) {
    Params params = request(kGrGetTpcMask);
    rm::write_field(std::span(params), kTpcGpcIdAt, static_cast<std::uint32_t>(physical_gpc));
    return params;
}

Params num_tpcs_request(int logical_gpc) {
    Params params = request(kGrGetNumTpcsForGpc);
    rm::write_field(std::span(params), 0, static_cast<std::uint32_t>(logical_gpc));
    return params;
}

Params gr_info_request(const std::vector<std::uint32_t>& indices) {
    if (indices.size() > kGrInfoMaxEntries) throw std::logic_error("too many GR info indices");
    Params params = request(kGrGetInfoV2);
    rm::write_field(std::span(params), 0, static_cast<std::uint32_t>(indices.size()));
    for (std::size_t i = 0; i < indices.size(); ++i) rm::write_field(std::span(params), kGrInfoListAt + 8 * i, indices[i]);
    return params;
}

Params grfs_request(const std::vector<GrfsQuery>& queries) {
    if (queries.size() > kGrfsMaxQueries) throw std::logic_error("too many GR FS queries");
    Params params = request(kGrmgrGetGrFsInfo);
    rm::write_field(std::span(params), 0, static_cast<std::uint16_t>(queries.size()));
    for (std::size_t i = 0; i < queries.size(); ++i) {
        const std::size_t at = kGrfsQueriesAt + kGrfsQuerySize * i;
        rm::write_field(std::span(params), at, queries[i].type);
        if (queries[i].type != kGrfsGpcCount) rm::write_field(std::span(params), at + 8, queries[i].gpc);
    }
    return params;
}

std::uint32_t decode_gpc_mask(Reply reply) { return rm::u32_at(reply, kGpcMaskAt); }
std::uint32_t decode_tpc_mask(Reply reply) { return rm::u32_at(reply, kTpcMaskAt); }
std::uint32_t decode_num_tpcs(Reply reply) { return rm::u32_at(reply, kNumTpcsAt); }

std::map<std::uint32_t, std::uint32_t> decode_gr_info(Reply reply) {
    const std::uint32_t count = rm::u32_at(reply, 0);
    if (count > kGrInfoMaxEntries) throw rm::DecodeError(fmt::format("GR info list of {} entries (at most {})", count, kGrInfoMaxEntries));
    std::map<std::uint32_t, std::uint32_t> values;
    for (std::size_t i = 0; i < count; ++i)
        values[rm::u32_at(reply, kGrInfoListAt + 8 * i)] = rm::u32_at(reply, kGrInfoListAt + 8 * i + 4);
    return values;
}

std::vector<GrfsAnswer> decode_grfs(Reply reply) {
    const std::uint16_t count = rm::u16_at(reply, 0);
    if (count > kGrfsMaxQueries) throw rm::DecodeError(fmt::format("{} GR FS queries (at most {})", count, kGrfsMaxQueries));
    std::vector<GrfsAnswer> answers;
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t at = kGrfsQueriesAt + kGrfsQuerySize * i;
        GrfsAnswer answer;
        answer.type = rm::u16_at(reply, at);
        answer.status = rm::u32_at(reply, at + 4);
        if (answer.type == kGrfsGpcCount) {
            answer.value = rm::u32_at(reply, at + 8);
        } else {
            answer.gpc = rm::u32_at(reply, at + 8);
            answer.value = rm::u32_at(reply, at + 12);
        }
        answers.push_back(answer);
    }
    return answers;
}

SmOrder decode_sm_order(Reply reply) {
    SmOrder order;
    order.sm_count = rm::u16_at(reply, kSmOrderNumSmAt);
    order.tpc_count = rm::u16_at(reply, kSmOrderNumTpcAt);
    if (static_cast<std::size_t>(order.sm_count) > kSmOrderMaxEntries)
        throw rm::DecodeError(fmt::format("SM order of {} SMs (at most {})", order.sm_count, kSmOrderMaxEntries));
    for (int sm = 0; sm < order.sm_count; ++sm) {
        const std::size_t at = kSmOrderEntrySize * static_cast<std::size_t>(sm);
        SmOrderEntry entry;
        entry.sm = sm;
        entry.logical_gpc = rm::u16_at(reply, at + kSmGpcId);
        entry.local_tpc = rm::u16_at(reply, at + kSmLocalTpcId);
        entry.global_tpc = rm::u16_at(reply, at + kSmGlobalTpcId);
        entry.virtual_gpc = rm::u16_at(reply, at + kSmVirtualGpcId);
        order.entries.push_back(entry);
    }
    return order;
}

}  // namespace gpupart::rm580
