#pragma once
// The claims on one GPU and the TPCs each holds: the claim-to-mask step of the Kubernetes driver's
// NodePrepareResources (docs/kubernetes.md). Pure: no files (claim_store.hpp keeps books on disk).
//  - A request for N TPCs is placed GPC-packed (model/placement.hpp) on TPCs no other claim holds. It fits
//    whenever N TPCs are free, as the scheduler's count of consumed capacity promises; packing only decides
//    which ones.
//  - A request for N whole GPCs takes GPCs none of whose TPCs another claim holds, the smallest first (the
//    larger ones stay for larger requests), lowest number on ties.
//  - Preparing a claim that is already here with the same request gives its TPCs again (a kubelet retry);
//    with another request it is refused. Releasing frees its TPCs; releasing an unknown claim is no error.
#include <optional>
#include <string>
#include <vector>

#include "fleet/claim.hpp"
#include "model/gpu.hpp"

namespace gpupart {

class ClaimBook {
public:
    // An empty book for the GPU `gpu_key` whose real TPCs are `real_tpcs`.
    ClaimBook(std::string gpu_key, TpcMask real_tpcs);
    // A book as recorded. Throws UserError (one line, no file name: the caller adds it) when the claims
    // cannot all be true: a uid twice, a claim with no TPC or one outside the real TPCs, two claims sharing a TPC.
    ClaimBook(std::string gpu_key, TpcMask real_tpcs, std::vector<Claim> claims);

    struct Prepared {
        Claim claim;
        bool already = false;  // it was prepared before with this request: nothing changed
    };
    // `gpu` must be this book's GPU with the same real TPCs (else UserError: the GPU changed since the
    // claims were recorded). Throws UserError when the request does not fit; the book is then unchanged.
    Prepared prepare(const Gpu& gpu, const ClaimRequest& request, const std::string& now_utc);
    std::optional<Claim> release(const std::string& uid);

    const Claim* find(const std::string& uid) const;
    TpcMask held() const;                       // every claim's TPCs
    TpcMask free() const { return real_tpcs_ & ~held(); }
    const std::vector<Claim>& claims() const { return claims_; }
    const std::string& gpu_key() const { return gpu_key_; }
    const TpcMask& real_tpcs() const { return real_tpcs_; }

private:
    std::string gpu_key_;
    TpcMask real_tpcs_;
    std::vector<Claim> claims_;  // in the order they were prepared
};

// `count` GPCs of `gpu` every real TPC of which is in `available`, smallest first, lowest index on ties.
// Throws UserError naming how many are wholly free when fewer than `count` are.
TpcMask place_whole_gpcs(const Gpu& gpu, int count, const TpcMask& available);

}  // namespace gpupart
