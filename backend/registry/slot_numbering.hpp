#pragma once
// Slots store launch-descriptor bits, the shim's language; everything above the registry speaks TPC numbers
// (model/tpc_numbering.hpp). These translate a slot record's masks with each GPU's map, in one place, so a
// slot written by any gpupart version reads the same and no running process's TPCs change on an upgrade.
#include <map>
#include <string>
#include <vector>

#include "model/gpu.hpp"
#include "model/tpc_numbering.hpp"
#include "registry/slot_file.hpp"

namespace gpupart {

// GPU key (model/gpu_queries.hpp gpu_key) -> that GPU's map. GPUs whose map is not known are left out.
using TpcNumberings = std::map<std::string, TpcNumbering>;
TpcNumberings numberings_of(const std::vector<Gpu>& gpus);
// Adds (or replaces) the map of `gpu` when it is known.
void learn_numbering(TpcNumberings& numberings, const Gpu& gpu);

// Translates every mask of `record` whose GPU is in `numberings` into TPC numbers (and marks it numbered);
// masks of other GPUs stay descriptor bits, unnumbered. The program's own masks (app block) are translated
// with the map of the process's one GPU when the shim stored bits.
void number_slot_masks(SlotRecord& record, const TpcNumberings& numberings);

}  // namespace gpupart
