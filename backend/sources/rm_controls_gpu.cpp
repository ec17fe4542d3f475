// GPU, FIFO and copy-engine controls: engines, runlist ids, channel groups, allocated channels, LCE
// caps and PCE masks, MIG mode, PIDs (branch 580 layouts of NVIDIA's open-gpu-kernel-modules headers).
#include <fmt/format.h>

#include "sources/rm_controls.hpp"

namespace gpupart::rm580 {
namespace {

constexpr std::size_t kMaxEngines = 84;  // NV2080_GPU_MAX_ENGINES_LIST_SIZE
// GPU_GET_ENGINE_RUNLIST_PRI_BASE: {engineList[84] @0; runlistPriBase[84] @336; runlistId[84] @672}.
constexpr std::size_t kRunlistIdsAt = 672;
constexpr std::uint32_t kRunlistInvalid = 0xFFFFFFFFu;
constexpr std::uint32_t kRunlistPriBaseError = 0xFFFFFFFBu;
constexpr std::size_t kRunlistPriBaseAt = 336;
// FIFO_GET_INFO: {fifoInfoTblSize @0; {index, data}[256] @4; engineType @2052}.
constexpr std::size_t kFifoMaxEntries = 256;
constexpr std::size_t kFifoEngineTypeAt = 2052;
// FIFO_GET_ALLOCATED_CHANNELS: {runlistId @0; bitMask[128] @4}.
constexpr std::size_t kChannelWords = 128;
// CE_GET_ALL_CAPS: {capsTbl[64][2] @0; u64 present @128}. CE_GET_CE_PCE_MASK: {ceEngineType; pceMask @4}.
constexpr int kMaxLces = 64;
constexpr std::size_t kCePresentAt = 128;
// GPU_GET_INFO_V2: {gpuInfoListSize @0; {index, data}[70] @4}.
constexpr std::size_t kGpuInfoMaxEntries = 70;
// GPU_GET_PIDS: {idType @0; id @4; pidTblCount @8; pidTbl[950] @12}; id type 0 = a class.
constexpr std::size_t kPidsMax = 950;
constexpr std::uint32_t kSubdeviceClass = 0x2080;

Params index_list(const Control& control, const std::vector<std::uint32_t>& indices, std::size_t max) {
    if (indices.size() > max) throw std::logic_error(fmt::format("too many {} indices", control.name));
    Params params = request(control);
    rm::write_field(std::span(params), 0, static_cast<std::uint32_t>(indices.size()));
    for (std::size_t i = 0; i < indices.size(); ++i) rm::write_field(std::span(params), 4 + 8 * i, indices[i]);
    return params;
}

std::map<std::uint32_t, std::uint32_t> index_values(Reply reply, std::size_t max, const char* what) {
    const std::uint32_t count = rm::u32_at(reply, 0);
    if (count > max) throw rm::DecodeError(fmt::format("{} list of {} entries (at most {})", what, count, max));
    std::map<std::uint32_t, std::uint32_t> values;
    for (std::size_t i = 0; i < count; ++i) values[rm::u32_at(reply, 4 + 8 * i)] = rm::u32_at(reply, 8 + 8 * i);
    return values;
}

}  // namespace

std::optional<std::uint32_t> copy_engine_type(int lce) {
    if (lce >= 0 && lce < 10) return 0x09u + static_cast<std::uint32_t>(lce);
    if (lce >= 10 && lce < 20) return 0x34u + static_cast<std::uint32_t>(lce - 10);
    return std::nullopt;
}

Params runlist_request(const std::vector<std::uint32_t>& engine_types) {
    if (engine_types.size() > kMaxEngines) throw std::logic_error("too many engines for one runlist request");
    Params params = request(kGpuGetEngineRunlistPriBase);
    for (std::size_t i = 0; i < engine_types.size(); ++i) rm::write_field(std::span(params), 4 * i, engine_types[i]);
    return params;
}

Params fifo_info_request(const std::vector<std::uint32_t>& indices, std::uint32_t engine_type) {
    Params params = index_list(kFifoGetInfo, indices, kFifoMaxEntries);
    rm::write_field(std::span(params), kFifoEngineTypeAt, engine_type);
    return params;
}

Params allocated_channels_request(int runlist) {
    Params params = request(kFifoGetAllocatedChannels);
    rm::write_field(std::span(params), 0, static_cast<std::uint32_t>(runlist));
    return params;
}

Params pce_mask_request(std::uint32_t engine_type) {
    Params params = request(kCeGetCePceMask);
    rm::write_field(std::span(params), 0, engine_type);
    return params;
}

Params gpu_info_request(const std::vector<std::uint32_t>& indices) { return index_list(kGpuGetInfoV2, indices, kGpuInfoMaxEntries); }

Params pids_request() {
    Params params = request(kGpuGetPids);
    rm::write_field(std::span(params), 0, std::uint32_t{0});
    rm::write_field(std::span(params), 4, kSubdeviceClass);
    return params;
}

std::vector<std::uint32_t> decode_engines(Reply reply) {
    const std::uint32_t count = rm::u32_at(reply, 0);
    if (count > kMaxEngines) throw rm::DecodeError(fmt::format("{} engines (at most {})", count, kMaxEngines));
    std::vector<std::uint32_t> engines;
    for (std::size_t i = 0; i < count; ++i) engines.push_back(rm::u32_at(reply, 4 + 4 * i));
    return engines;
}

std::vector<std::optional<int>> decode_runlist_ids(Reply reply, std::size_t engines) {
    if (engines > kMaxEngines) throw rm::DecodeError("too many engines");
    std::vector<std::optional<int>> ids;
    for (std::size_t i = 0; i < engines; ++i) {
        const std::uint32_t id = rm::u32_at(reply, kRunlistIdsAt + 4 * i);
        const std::uint32_t base = rm::u32_at(reply, kRunlistPriBaseAt + 4 * i);
        if (id == kRunlistInvalid || base == kRunlistPriBaseError)
            ids.push_back(std::nullopt);
        else
            ids.push_back(static_cast<int>(id));
    }
    return ids;
}

std::map<std::uint32_t, std::uint32_t> decode_fifo_info(Reply reply) { return index_values(reply, kFifoMaxEntries, "FIFO info"); }

std::vector<int> decode_allocated_channels(Reply reply) {
    std::vector<int> channels;
    for (std::size_t word = 0; word < kChannelWords; ++word) {
        const std::uint32_t bits = rm::u32_at(reply, 4 + 4 * word);
        for (int bit = 0; bit < 32; ++bit)
            if (bits & (1u << bit)) channels.push_back(static_cast<int>(word * 32) + bit);
    }
    return channels;
}

CeAllCaps decode_ce_all_caps(Reply reply) {
    CeAllCaps caps;
    caps.present = rm::read_field<std::uint64_t>(reply, kCePresentAt);
    for (int lce = 0; lce < kMaxLces; ++lce)
        if (caps.present & (std::uint64_t{1} << lce))
            caps.caps[lce] = rm::u16_at(reply, 2 * static_cast<std::size_t>(lce));
    return caps;
}

std::uint32_t decode_pce_mask(Reply reply) { return rm::u32_at(reply, 4); }

std::map<std::uint32_t, std::uint32_t> decode_gpu_info(Reply reply) { return index_values(reply, kGpuInfoMaxEntries, "GPU info"); }

std::vector<int> decode_pids(Reply reply) {
    const std::uint32_t count = rm::u32_at(reply, 8);
    if (count > kPidsMax) throw rm::DecodeError(fmt::format("{} PIDs (at most {})", count, kPidsMax));
    std::vector<int> pids;
    for (std::size_t i = 0; i < count; ++i) pids.push_back(static_cast<int>(rm::u32_at(reply, 12 + 4 * i)));
    return pids;
}

}  // namespace gpupart::rm580
