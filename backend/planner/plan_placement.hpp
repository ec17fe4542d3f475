#pragma once
// Real TPCs for a plan's partitions: each partition's TPC count placed GPC-packed (Bakita & Anderson, RTAS 2023: "SE-packed"
// partitions, which fill whole GPCs before taking from another, keep cache and bus interference inside
// a GPC) with model/placement's place_tpcs_packed, one partition after another on what is left.
#include <vector>

#include "model/gpu.hpp"

namespace gpupart {

// Masks for partitions of `tpc_counts` TPCs (in that order) out of `available`, disjoint. The largest
// partition is placed first: it is the one that can fill whole GPCs, and the smaller ones then fit into
// what is left of a GPC rather than splitting a large one across three. Throws UserError when the counts
// add up to more TPCs than are available, or a count is below 1.
std::vector<TpcMask> place_partitions_packed(const Gpu& gpu, const std::vector<int>& tpc_counts,
                                             const TpcMask& available);

}  // namespace gpupart
