#pragma once
// The nvdebug kernel module's view of GPU N: its /proc/gpuN/ files (or a copy of them under another
// root, `--nvdebug-root`), parsed and decoded into facts. nvdebug reads registers straight from BAR0,
// so it works where the driver's own controls are not reachable; it cannot be loaded on our test
// machines (no kernel headers), so there this source is absent and says so.
//
// Decoding (register layouts from NVIDIA's published manuals, as nvdebug itself cites them):
//  - num_gpcs / num_tpc_per_gpc: NV_PTOP_SCAL_NUM_GPCS / _NUM_TPC_PER_GPC, value in bits 4:0.
//  - gpc_mask, gpcK_tpc_mask: NV_FUSE_STATUS_OPT_GPC / _TPC_GPC(K): a set bit is a DISABLED unit.
//  - CWD_GPC_TPC_IDk: global TPCs 4k..4k+3, byte j = TPC index (bits 3:0) and GPC (bits 7:4).
//  - CWD_SM_IDk: global TPCs 4k..4k+3, byte j = the TPC's first SM id.
//  - pce_map: NV_CE_PCE_MAP, a set bit is a present physical copy engine.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/provenance.hpp"
#include "sources/nvdebug_parse.hpp"
#include "sources/source_status.hpp"

namespace gpupart {

struct NvdebugCwdTpc {
    int global_tpc = 0;
    int gpc = 0;        // as the CWD numbers it (the logical GPC)
    int local_tpc = 0;
    std::optional<int> first_sm;  // from CWD_SM_IDk, when that file was there
};

struct NvdebugRunlistFile {
    int index = 0;  // R of runlistR: nvdebug counts runlists in device_info order, not by hardware runlist id
    Fact<NvdebugRunlist> runlist;
};

struct NvdebugFacts {
    SourceStatus status;
    std::string directory;  // ".../gpuN"
    Fact<int> gpc_slots;          // num_gpcs (GPCs on the chip, enabled or not)
    Fact<int> tpc_slots_per_gpc;  // num_tpc_per_gpc
    Fact<int> copy_engine_count;  // num_ces
    Fact<std::uint32_t> enabled_gpcs;                // ~gpc_mask over the GPC slots
    std::map<int, Fact<std::uint32_t>> enabled_tpcs;  // physical GPC -> ~gpcK_tpc_mask over the TPC slots
    std::vector<NvdebugCwdTpc> cwd_tpcs;             // from CWD_GPC_TPC_IDk, while a context is active
    std::string cwd_unknown;                          // why cwd_tpcs is empty
    Fact<std::vector<NvdebugEngine>> engines;        // device_info
    Fact<std::vector<NvdebugCopyLink>> copy_links;   // copy_topology
    Fact<std::uint32_t> pce_map;
    std::vector<NvdebugRunlistFile> runlists;
};

// `root` is "/proc" on a machine with nvdebug loaded. absent: no root/gpuN; failed: the directory is
// there but one file is unreadable or holds text nvdebug never prints (the facts it gave are kept; each
// fact that failed carries its reason).
NvdebugFacts read_nvdebug(const std::string& root, int gpu_index);

// The driver's SM order as the CWD registers give it, for the probe join: each TPC's `sms_per_tpc` SMs
// from its first SM id. Empty when CWD_SM_IDk was not readable.
std::vector<SmOrderEntry> nvdebug_sm_order(const NvdebugFacts& facts, int sms_per_tpc);

}  // namespace gpupart
