#pragma once
// Readers for the raw measurement logs in tests/fixtures/ (h200 probe logs, live H200 capture),
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

// `gpupart engines` as root: which runlist serves each engine, and the channels allocated on each.
struct EngineRunlists {
    std::map<std::string, int> engine_runlist;  // "COPY0" -> 0
    std::map<int, std::vector<int>> channels;   // runlist id -> allocated channel ids
};

std::string read_text(const std::string& path);  // throws std::runtime_error naming the path
MaskBitsLog parse_maskbits_log(const std::string& text);
std::vector<std::vector<int>> parse_cluster_groups(const std::string& corun_text);  // "cluster8" groups
std::string parse_pci_bus_id(const std::string& env_text);
EngineRunlists parse_engine_runlists(const std::string& engines_text);

}  // namespace gpupart::recorded
