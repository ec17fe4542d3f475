#pragma once
// Where each fact about a GPU came from (`gpupart topology --sources`): one row per fact or group of
// facts, with its value, the sources behind it (and how many items each gave), or why it is unknown.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/gpu.hpp"
#include "sources/source_status.hpp"

namespace gpupart {

struct FactOrigin {
    std::string fact;    // "TPC mask bits"
    std::string value;   // "66 (gpc, slot)"; empty when unknown
    std::vector<std::pair<Provenance, int>> from;  // distinct provenances, with how many items each gave
    std::string unknown_reason;  // set when value is empty
};

std::vector<FactOrigin> fact_origins(const Gpu& gpu);
// The status lines of the sources, then the fact rows. `sources` is empty for a recording.
std::string sources_text(const Gpu& gpu, const std::vector<SourceStatus>& sources, bool live);

// Each TPC by number with its launch-descriptor mask bit, SMs and GPC: the one place the descriptor bits are
// shown (masks name TPC numbers; experts write bits as `bits:0x...`).
struct TpcBitRow {
    std::optional<int> tpc;  // its number (TPC k = SMs 2k and 2k+1), when its SMs give one
    std::optional<int> descriptor_bit;
    std::vector<int> sms;
    std::optional<int> gpc;
};
std::vector<TpcBitRow> tpc_bit_rows(const Gpu& gpu);  // by number, TPCs of no known number last

}  // namespace gpupart
