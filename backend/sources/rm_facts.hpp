#pragma once
// What the RM controls said about one GPU, decoded but not yet shaped into the model: each answer
// holds its value or why there is none ("needs root", "GR_GET_TPC_MASK: NV_ERR_NOT_SUPPORTED (0x56)").
// The reader fills it (rm_reader), the builder turns it into a Gpu (rm_gpu_builder).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sources/rm_client.hpp"
#include "sources/rm_controls.hpp"

namespace gpupart {

template <typename T>
struct RmAnswer {
    std::optional<T> value;
    std::string why_not;  // set exactly when value is empty

    bool ok() const { return value.has_value(); }
    static RmAnswer failed(std::string why) { return RmAnswer{std::nullopt, std::move(why)}; }
};

// GRMGR_GET_GR_FS_INFO: the driver's logical GPC ids and what they are physically.
struct RmGpcMap {
    std::map<int, int> physical_of_logical;
    std::map<int, std::uint32_t> tpc_mask_of_logical;  // physical TPC mask, by logical GPC
};

struct RmFacts {
    std::string driver_version;
    RmCard card;
    bool as_root = false;  // the reader had CAP_SYS_ADMIN (root-only controls were asked)

    RmAnswer<std::string> uuid;  // GPU_GET_GID_INFO, as NVML and CUDA print it
    RmAnswer<std::string> name;
    RmAnswer<rm580::SmcMode> smc_mode;
    RmAnswer<std::map<std::uint32_t, std::uint32_t>> gr_info;  // GR info index -> value
    RmAnswer<std::uint32_t> gpc_mask;                          // physical GPCs present
    std::map<int, RmAnswer<std::uint32_t>> tpc_mask;           // physical GPC -> physical TPC mask
    std::map<int, RmAnswer<std::uint32_t>> tpc_count;          // logical GPC -> TPCs
    RmAnswer<RmGpcMap> gpc_map;
    RmAnswer<rm580::SmOrder> sm_order;

    RmAnswer<std::vector<std::uint32_t>> engines;  // NV2080 engine types
    RmAnswer<std::map<std::uint32_t, int>> runlist_of_engine;  // root; engines with no runlist are absent
    RmAnswer<bool> per_runlist_channel_ram;  // else the driver counts TSGs for the whole GPU only
    std::map<std::uint32_t, RmAnswer<int>> tsgs_in_use;        // engine type -> TSGs on its runlist (per-runlist RAM only)
    RmAnswer<std::map<std::uint32_t, std::uint32_t>> fifo_info;  // FIFO info index -> value (GPU-wide)
    std::map<int, RmAnswer<std::vector<int>>> channels;         // runlist -> allocated channel ids (root)
    RmAnswer<rm580::CeAllCaps> ce_caps;
    std::map<int, RmAnswer<std::uint32_t>> pce_mask;            // LCE -> PCE mask
    RmAnswer<std::vector<int>> pids;                            // processes with objects on the GPU
};

}  // namespace gpupart
