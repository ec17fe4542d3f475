#pragma once
// The controller's rules: each a pure function of the system state and the planned changes, each
// finding citing where its rule comes from (the papers, by authors and venue, or gpupart's own measurements).
#include <string>
#include <vector>

#include "controller/finding.hpp"
#include "controller/system_state.hpp"

namespace gpupart {

struct PlannedChange {
    int pid = 0;
    std::uint64_t start_time = 0;
    unsigned uid = 0;
    std::string command;
    bool before_partitioned = false;
    TpcMask before;
    std::uint64_t before_generation = 0;
    bool after_partitioned = true;
    TpcMask after;
};

// The system as it would be with `changes` applied.
SystemState state_after(const SystemState& state, const std::vector<PlannedChange>& changes);

// Rules about one change: a mask with no real TPC, permission, a change that changes nothing, CUDA
// graphs keeping their upload mask.
std::vector<Finding> check_change(const SystemState& state, const PlannedChange& change);

// Rules about the whole GPU after the changes: overlaps, GPCs split (partial-gpc), unpartitioned processes, TPCs left to nobody,
// MPS missing, too many MPS clients, MPS static partitioning, copy engines shared through a GRCE.
std::vector<Finding> check_result(const SystemState& after);
// The same, every finding: check_result keeps at most 20 of each kind and says how many more. For counts
// (the exporter's gpupart_findings), never for printing.
std::vector<Finding> every_result_finding(const SystemState& after);

// Both, for a list of changes: what `gpupart set --dry-run` shows. Findings the state as it is has
// too (same id and message) have is_new false: a plan marks only what it introduces.
std::vector<Finding> check_plan(const SystemState& state, const std::vector<PlannedChange>& changes);

inline constexpr int kMpsClientLimit = 15;  // Bakita & Anderson, ECRTS 2025: 128-channel TSG / 8 connections per client

}  // namespace gpupart
