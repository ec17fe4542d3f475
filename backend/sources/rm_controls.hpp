#pragma once
// The RM controls the reader issues, with their parameter layouts in driver branch 580 (NVIDIA's
// open-gpu-kernel-modules headers; the only branch verified, so the only one read). Each control has a request builder
// (a zeroed block of the exact size the driver demands, inputs filled in) and a pure decoder from the
// reply bytes to values; decoders throw rm::DecodeError on a reply that cannot be right.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sources/rm_bytes.hpp"
#include "sources/source_status.hpp"

namespace gpupart::rm580 {

struct Control {
    std::uint32_t cmd = 0;
    std::size_t size = 0;  // paramsSize must equal it exactly (NV_ERR_INVALID_PARAM_STRUCT otherwise)
    const char* name = "";
};

using Params = std::vector<std::byte>;
using Reply = std::span<const std::byte>;

// Graphics: floorsweeping, SM order (no privilege).
inline constexpr Control kGrGetGpcMask{0x2080122A, 24, "GR_GET_GPC_MASK"};
inline constexpr Control kGrGetTpcMask{0x2080122B, 24, "GR_GET_TPC_MASK"};
inline constexpr Control kGrGetNumTpcsForGpc{0x20801234, 8, "GR_GET_NUM_TPCS_FOR_GPC"};
inline constexpr Control kGrGetInfoV2{0x20801228, 488, "GR_GET_INFO_V2"};
inline constexpr Control kGrGetGlobalSmOrder{0x2080121B, 9240, "GR_GET_GLOBAL_SM_ORDER"};
inline constexpr Control kGrmgrGetGrFsInfo{0x20803801, 1928, "GRMGR_GET_GR_FS_INFO"};
// GPU, FIFO and copy engines.
inline constexpr Control kGpuGetEnginesV2{0x20800170, 340, "GPU_GET_ENGINES_V2"};
inline constexpr Control kGpuGetEngineRunlistPriBase{0x20800179, 1008, "GPU_GET_ENGINE_RUNLIST_PRI_BASE"};  // root
inline constexpr Control kFifoGetInfo{0x20801109, 2056, "FIFO_GET_INFO"};
inline constexpr Control kFifoGetAllocatedChannels{0x20801119, 516, "FIFO_GET_ALLOCATED_CHANNELS"};  // root
inline constexpr Control kCeGetAllCaps{0x20802A0A, 136, "CE_GET_ALL_CAPS"};
inline constexpr Control kCeGetCePceMask{0x20802A02, 8, "CE_GET_CE_PCE_MASK"};
inline constexpr Control kGpuGetInfoV2{0x20800102, 564, "GPU_GET_INFO_V2"};
inline constexpr Control kGpuGetPids{0x2080018D, 3812, "GPU_GET_PIDS"};
// Identity: the UUID nvidia-smi and CUDA print, and the board's name (no privilege).
inline constexpr Control kGpuGetGidInfo{0x2080014A, 268, "GPU_GET_GID_INFO"};
inline constexpr Control kGpuGetNameString{0x20800110, 132, "GPU_GET_NAME_STRING"};

inline Params request(const Control& control) { return Params(control.size); }

// GR info indices (ctrl0080gr.h).
inline constexpr std::uint32_t kGrInfoShaderPipeSubCount = 0x09;
inline constexpr std::uint32_t kGrInfoSmVersion = 0x0C;
inline constexpr std::uint32_t kGrInfoLitterNumGpcs = 0x14;
inline constexpr std::uint32_t kGrInfoLitterNumTpcPerGpc = 0x17;
inline constexpr std::uint32_t kGrInfoLitterNumSmPerTpc = 0x20;
// FIFO info indices (ctrl2080fifo.h).
inline constexpr std::uint32_t kFifoMaxChannelGroups = 1;
inline constexpr std::uint32_t kFifoMaxChannelsPerGroup = 2;
inline constexpr std::uint32_t kFifoChannelGroupsInUse = 6;
inline constexpr std::uint32_t kFifoPerRunlistChannelRam = 7;  // 0: one channel RAM (and TSG count) for all runlists
inline constexpr std::uint32_t kFifoChannelGroupsInUsePerEngine = 9;
// GPU info index of the MIG (SMC) mode, and its values.
inline constexpr std::uint32_t kGpuInfoSmcMode = 0x2A;
enum class SmcMode : std::uint32_t { unsupported = 0, enabled = 1, disabled = 2, enable_pending = 3, disable_pending = 4 };
// GRMGR_GET_GR_FS_INFO query types.
inline constexpr std::uint16_t kGrfsGpcCount = 1;
inline constexpr std::uint16_t kGrfsChipletGpcMap = 2;  // logical GPC -> physical GPC
inline constexpr std::uint16_t kGrfsTpcMask = 3;        // physical TPC mask of a logical GPC
// Engine type of LCE n (cl2080_notification.h): COPY0..9 = 0x09..0x12, COPY10..19 = 0x34..0x3D.
std::optional<std::uint32_t> copy_engine_type(int lce);

Params tpc_mask_request(int physical_gpc);
Params num_tpcs_request(int logical_gpc);
Params gr_info_request(const std::vector<std::uint32_t>& indices);
struct GrfsQuery {
    std::uint16_t type = 0;
    std::uint32_t gpc = 0;  // logical GPC, for the per-GPC query types
};
Params grfs_request(const std::vector<GrfsQuery>& queries);
Params runlist_request(const std::vector<std::uint32_t>& engine_types);
Params fifo_info_request(const std::vector<std::uint32_t>& indices, std::uint32_t engine_type);
Params allocated_channels_request(int runlist);
Params pce_mask_request(std::uint32_t engine_type);
Params gpu_info_request(const std::vector<std::uint32_t>& indices);
Params pids_request();  // every process with a subdevice of this GPU
Params gid_request();   // the UUID as text ("GPU-" and 36 characters)
Params name_request();  // the name as ASCII

std::uint32_t decode_gpc_mask(Reply reply);
std::uint32_t decode_tpc_mask(Reply reply);
std::uint32_t decode_num_tpcs(Reply reply);
std::map<std::uint32_t, std::uint32_t> decode_gr_info(Reply reply);  // index -> value
struct GrfsAnswer {
    std::uint16_t type = 0;
    std::uint32_t status = 0;  // per-query RM status
    std::uint32_t gpc = 0;     // the logical GPC asked about
    std::uint32_t value = 0;   // GPC count, physical GPC or TPC mask
};
std::vector<GrfsAnswer> decode_grfs(Reply reply);
struct SmOrder {
    int sm_count = 0;
    int tpc_count = 0;
    std::vector<SmOrderEntry> entries;  // entry k is SM k
};
SmOrder decode_sm_order(Reply reply);
std::vector<std::uint32_t> decode_engines(Reply reply);
// Runlist id of each engine asked, in order; empty where the driver has none (SW, or no runlist).
std::vector<std::optional<int>> decode_runlist_ids(Reply reply, std::size_t engines);
std::map<std::uint32_t, std::uint32_t> decode_fifo_info(Reply reply);  // index -> value
std::vector<int> decode_allocated_channels(Reply reply);
struct CeAllCaps {
    std::uint64_t present = 0;  // bit n: LCE n exists
    std::map<int, std::uint16_t> caps;  // LCE -> caps bytes (byte 0 low)
};
CeAllCaps decode_ce_all_caps(Reply reply);
std::uint32_t decode_pce_mask(Reply reply);
std::map<std::uint32_t, std::uint32_t> decode_gpu_info(Reply reply);
std::vector<int> decode_pids(Reply reply);
std::string decode_gid(Reply reply);   // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", or DecodeError
std::string decode_name(Reply reply);  // printable ASCII, or DecodeError

}  // namespace gpupart::rm580
