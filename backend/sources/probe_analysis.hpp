#pragma once
// What a probe report means: which mask bits are TPCs (and which SMs each drives), which are holes,
// whether the map is consistent, and, joined with the driver's global SM order (RM control
// GR_GET_GLOBAL_SM_ORDER or nvdebug's CWD registers), each bit's GPC and TPC. Pure functions: CI tests
// them on the recorded H200 and H100 scans.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/tpc_mask.hpp"
#include "sources/probe_report.hpp"
#include "sources/source_status.hpp"

namespace gpupart {

struct ProbeBit {
    int mask_bit = 0;
    std::vector<int> sms;
    bool operator==(const ProbeBit&) const = default;
};

struct ProbeMap {
    std::vector<ProbeBit> tpcs;         // real bits, by mask bit
    std::vector<int> holes;             // bits that drove no SM, ascending
    std::vector<std::string> problems;  // one line each: SMs driven by two bits, SMs no bit drove, ids >= SM count

    TpcMask real_tpcs() const;
    bool consistent() const { return problems.empty(); }
};

ProbeMap analyse_probe(const ProbeReport& report);

// A mask bit placed in the driver's GPC/TPC numbering. The GPC is the driver's logical GPC (the
// numbering of GR_GET_GLOBAL_SM_ORDER's gpcId); local_tpc is its compacted TPC index within that GPC.
struct BitPlacement {
    int mask_bit = 0;
    std::vector<int> sms;
    std::optional<int> logical_gpc;
    std::optional<int> local_tpc;
    std::optional<int> global_tpc;
    std::optional<int> virtual_gpc;
    std::string note;  // why a field is empty, when one is
};

struct ProbeJoin {
    std::vector<BitPlacement> bits;      // every real bit, by mask bit
    std::vector<std::string> conflicts;  // one line each: a bit's SMs in two GPCs or TPCs, two bits on one TPC, SMs
                                         // missing from the SM order, SM-order TPCs no bit drives

    bool agrees() const { return conflicts.empty(); }
    // Mask bits of each logical GPC, in TPC order.
    std::map<int, std::vector<int>> bits_by_gpc() const;
};

ProbeJoin join_with_sm_order(const ProbeMap& map, const std::vector<SmOrderEntry>& sm_order);

}  // namespace gpupart
