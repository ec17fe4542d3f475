#pragma once
// The probing procedure (docs/probe-and-sources.md), apart from CUDA: which masks gpupart-probe launches,
// in which order, and what the SMs they reached say about each mask bit. Kept free of CUDA so CI can
// run it against a simulated GPU and prove its one safety rule: no launch ever allows only holes
// (such a kernel is never scheduled and would wait forever).
//
//  1. One unmasked launch: every SM must answer (else %smid is not the physical id, e.g. under MPS).
//  2. The anchor: the lowest bit b whose "every bit but b" launch misses some SMs. Those launches are
//     safe on any GPU with at least two TPCs (3+ SMs: a TPC drives at most two), and a bit whose
//     removal misses nothing is a hole.
//  3. Every later bit c together with the anchor: the SMs reached, less the anchor's, are c's.
#include <map>
#include <optional>
#include <vector>

#include "model/tpc_mask.hpp"

namespace gpupart {

// Runs one bounded kernel of `blocks` blocks (each block reports its %smid) with the TPC mask
// `allowed` (nullopt: no mask at all) and returns the distinct SM ids reached, sorted. `known_real`
// is what the caller knows to be real TPCs among `allowed`, for the shim's own no-real-TPC check.
class MaskLauncher {
public:
    virtual ~MaskLauncher() = default;
    virtual std::vector<int> launch(const std::optional<TpcMask>& allowed, const TpcMask& known_real, int blocks) = 0;
};

struct ProbeScan {
    int anchor_bit = -1;
    std::map<int, std::vector<int>> bit_sms;  // bits 0..width-1; a hole has no SMs
    int launches = 0;
};

// Throws UserError when the GPU answers in a way the procedure cannot use (fewer than 3 SMs, an
// unmasked launch that misses SMs, no bit drives any SM, a one-bit launch that misses the anchor).
ProbeScan scan_mask_bits(MaskLauncher& launcher, int sm_count, int mask_width);

}  // namespace gpupart
