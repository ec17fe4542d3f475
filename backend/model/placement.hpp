#pragma once
// Placing a requested number of TPCs or GPCs on real TPCs of one GPU. GPC-packed (Bakita & Anderson, RTAS 2023:
// "SE-packed" partitions, which fill whole GPCs, beat spread ones on cache and bus interference).
#include "model/gpu.hpp"

namespace gpupart {

// `count` TPCs out of `available` (real TPCs only are considered). Fits the request into the
// smallest GPC that holds it; otherwise takes whole GPCs, largest first, then fits the remainder
// the same way; TPCs whose GPC is undetermined are used last. Throws UserError if too few are available.
TpcMask place_tpcs_packed(const Gpu& gpu, int count, const TpcMask& available);

// `count` whole GPCs, those with the most available TPCs first (lowest index on ties).
TpcMask place_gpcs(const Gpu& gpu, int count, const TpcMask& available);

}  // namespace gpupart
