#pragma once
// Readers for the raw measurement logs in tests/fixtures/ (h200 probe logs, h100 RM-control replies),
// used to build the built-in snapshots and by the test that proves the snapshots match the logs.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpupart::recorded {

struct MaskBitsLog {
    int sm_count = 0;
    int descriptor_version = 0;
    std::map<int, std::vector<int>> bit_sms;  // every real mask bit -> its SMs (bit 0 included)
    std::vector<int> holes;                   // mask bits with no SM
};

struct RmReplies {
    std::vector<std::uint32_t> engine_types;  // GPU_GET_ENGINES_V2
    struct Ce {
        int lce = 0;
        std::uint32_t pce_mask = 0;
        std::string caps_hex;
    };
    std::vector<Ce> copy_engines;              // CE lines with status 0
    std::map<std::uint32_t, int> runlist_of;   // engine type -> runlist id (root only)
};

std::string read_text(const std::string& path);  // throws std::runtime_error naming the path
MaskBitsLog parse_maskbits_log(const std::string& text);
std::vector<std::vector<int>> parse_cluster_groups(const std::string& corun_text);  // "cluster8" groups
std::string parse_pci_bus_id(const std::string& env_text);
RmReplies parse_rm_replies(const std::string& replies_text, const std::string& replies2_text);

}  // namespace gpupart::recorded
