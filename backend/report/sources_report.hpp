#pragma once
// Where each fact about a GPU came from (`gpupart topology --sources`): one row per fact or group of
// facts, with its value, the sources behind it (and how many items each gave), or why it is unknown.
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

}  // namespace gpupart
