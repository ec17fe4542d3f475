#pragma once
// Turning a mask expression into the TPC numbers it means on one GPU. A TPC number the GPU does not have
// is refused; descriptor bits (bits:0x...) that are holes are dropped (and reported), and an expression
// that leaves no real TPC is refused, because a kernel allowed only on holes never runs.
#include <string>
#include <vector>

#include "model/gpu.hpp"
#include "model/mask_expression.hpp"

namespace gpupart {

struct ResolvedMask {
    TpcMask mask;           // TPC numbers, real TPCs only
    TpcMask dropped_holes;  // descriptor bits (bits:) the expression named that have no TPC
    std::vector<std::string> notes;           // about this mask: what was dropped, how a count was placed
    std::vector<std::string> topology_notes;  // about the GPU, e.g. TPCs that no GPC name includes
};

// Throws UserError (one line naming the expression and the GPU) when the expression names a GPC
// that does not exist, a bit beyond the GPU's mask width, or no real TPC at all.
ResolvedMask resolve_mask(const MaskExpression& expression, const Gpu& gpu);
ResolvedMask resolve_mask(std::string_view expression, const Gpu& gpu);

}  // namespace gpupart
