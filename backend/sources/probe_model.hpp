#pragma once
// Gives a live model its launch-mask bits from a probe report: each real bit goes to the TPC (from the
// RM controls) that holds exactly the SMs the bit drove, every other bit becomes a hole. The SM order
// join (probe_analysis) must agree first; where it does not, or a bit's SMs match no TPC, nothing is
// changed and the status says why. With no TPC layout from the driver the probe's bits stand alone
// (TPCs with SMs, GPC not determined).
#include "model/gpu.hpp"
#include "sources/probe_report.hpp"
#include "sources/source_status.hpp"

namespace gpupart {

// `sm_order`: the driver's global SM order the model's TPCs were built from (empty when none).
// `where`: the cache file the report came from, for provenance. Returns the probe's source status.
SourceStatus apply_probe(const ProbeReport& report, const std::vector<SmOrderEntry>& sm_order, const std::string& where, Gpu& gpu);

}  // namespace gpupart
