#pragma once
// The H100 RM-control replies recorded in tests/fixtures/h100-rmctrl/ (replies*.txt), parsed back
// into values: the control blocks ("NAME 0xCMD st=0xSTATUS" and their indented lines) and what each
// block printed, decoded values or raw parameter bytes. Test support only: the fixture transport
// replays these to the real RM reader.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpupart::test {

struct RecordedBlock {
    std::uint32_t cmd = 0;
    std::uint32_t status = 0;
    std::vector<std::string> lines;  // the block's indented lines, leading blanks removed
};

struct RecordedCe {
    std::uint32_t pce_status = 0;
    std::uint32_t pce_mask = 0;
};

struct RecordedGrfs {
    std::uint16_t type = 0;
    std::uint32_t status = 0;
    std::array<std::uint32_t, 3> data{};  // the union's first three u32
};

struct RecordedTpc {
    std::uint32_t mask_status = 0;
    std::uint32_t mask = 0;
    std::uint32_t count_status = 0;
    std::uint32_t count = 0;
};

struct RecordedRm {
    std::string version;  // "580.159.04"
    int uid = -1;         // who ran the recording: 0 or 65534
    std::uint32_t gpu_id = 0;
    unsigned minor = 0;
    std::map<std::string, RecordedBlock> blocks;   // replies*.txt
    std::map<std::string, RecordedBlock> blocks2;  // replies2*.txt

    std::uint32_t gpc_mask = 0;
    std::map<std::uint32_t, std::uint32_t> gr_info;  // index -> value
    std::map<int, RecordedTpc> gpcs;                 // "gpc G": TPC mask of physical G, TPC count of logical G
    int sm_count = 0;
    int tpc_count = 0;
    std::vector<std::array<std::uint16_t, 9>> sm_order;
    std::vector<std::uint32_t> engines;
    std::map<std::uint32_t, RecordedCe> copy_engines;  // by engine type
    std::uint64_t ce_present = 0;
    std::vector<std::uint8_t> ce_caps_bytes;            // capsTbl as printed (first LCEs)
    std::vector<std::pair<std::uint32_t, std::uint32_t>> fifo_info;  // (index, value)
    std::pair<std::uint32_t, std::uint32_t> smc{};      // (index, value)
    std::vector<RecordedGrfs> grfs;
    // replies2: GPU_GET_ENGINE_RUNLIST_PRI_BASE of GR0, COPY0..4, and FIFO_GET_ALLOCATED_CHANNELS of runlist 0.
    std::vector<std::uint32_t> runlist_bases;
    std::vector<std::uint32_t> runlist_ids;
    std::vector<std::uint32_t> allocated_rl0_words;
    std::uint32_t device_instance = 0;
};

// `who` is "root" or "nobody": reads replies-WHO.txt and replies2-WHO.txt from `directory`.
// Throws std::runtime_error naming the line it cannot read.
RecordedRm load_recorded_rm(const std::string& directory, const std::string& who);

// "000000008020..." -> bytes.
std::vector<std::uint8_t> hex_bytes(const std::string& hex);

}  // namespace gpupart::test
