#pragma once
// The floorplan part of the RM model: physical GPCs (GR_GET_GPC_MASK) as rows of TPC slots
// (LITTER_NUM_TPC_PER_GPC), each TPC in its slot of the physical TPC mask, with the SMs the global SM
// order gives its logical GPC and TPC (logical -> physical GPC from GRMGR_GET_GR_FS_INFO). Floorswept
// slots stay empty. Where the controls disagree with each other, SMs are left off with the reason.
#include <cstdint>
#include <optional>
#include <string>

#include "model/gpu.hpp"
#include "sources/rm_facts.hpp"

namespace gpupart {

// A fact's provenance when an RM control gave it; `control` names the control ("GR_GET_INFO_V2").
inline Provenance from_rm(std::string control) { return Provenance{Source::rmctrl, std::move(control)}; }

std::optional<std::uint32_t> gr_info_value(const RmFacts& facts, std::uint32_t index);
void add_rm_topology(const RmFacts& facts, Gpu& gpu);

}  // namespace gpupart
