#include "sources/probe_scan.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {
namespace {

// Blocks per launch. The probe kernel holds one block per SM (it asks for more than half of an SM's
// shared memory), so the first wave puts a block on every allowed SM: twice the SM count for the
// wide launches, 16 for an anchor-plus-one launch (at most 4 SMs).
int wide_blocks(int sm_count) { return 2 * sm_count; }
constexpr int kPairBlocks = 16;

std::vector<int> minus(const std::vector<int>& a, const std::vector<int>& b) {
    std::vector<int> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

}  // namespace

ProbeScan scan_mask_bits(MaskLauncher& launcher, int sm_count, int mask_width) {
    if (sm_count < 3)
        throw UserError(fmt::format("{} SMs: the probe needs at least two TPCs to probe without risking a hang", sm_count));
    if (mask_width != 64 && mask_width != 128) throw UserError(fmt::format("mask width {} is neither 64 nor 128", mask_width));
    ProbeScan scan;
    const TpcMask every_bit = TpcMask::range(0, mask_width - 1);

    const std::vector<int> all = launcher.launch(std::nullopt, TpcMask{}, wide_blocks(sm_count));
    ++scan.launches;
    if (static_cast<int>(all.size()) != sm_count || all.front() != 0 || all.back() != sm_count - 1)
        throw UserError(fmt::format("an unmasked launch reached {} distinct SM ids, not 0-{}: %smid is not the physical SM "
                                    "(is MPS serving this process? it virtualises SM ids)",
                                    all.size(), sm_count - 1));

    std::vector<int> anchor_sms;
    for (int bit = 0; bit < mask_width && scan.anchor_bit < 0; ++bit) {
        TpcMask others = every_bit;
        others.set(bit, false);
        // Safe: with at least two TPCs, every mask that leaves out one bit still allows a real one, so
        // the whole mask is declared real for the shim's no-real-TPC check.
        const std::vector<int> reached = launcher.launch(others, others, wide_blocks(sm_count));
        ++scan.launches;
        std::vector<int> missing = minus(all, reached);
        if (missing.empty()) {
            scan.bit_sms[bit] = {};
            continue;
        }
        scan.anchor_bit = bit;
        anchor_sms = std::move(missing);
        scan.bit_sms[bit] = anchor_sms;
    }
    if (scan.anchor_bit < 0) throw UserError("no mask bit drives any SM: the launch descriptor mask had no effect");

    TpcMask anchor;
    anchor.set(scan.anchor_bit);
    for (int bit = scan.anchor_bit + 1; bit < mask_width; ++bit) {
        TpcMask pair = anchor;
        pair.set(bit);
        const std::vector<int> reached = launcher.launch(pair, anchor, kPairBlocks);
        ++scan.launches;
        if (!std::includes(reached.begin(), reached.end(), anchor_sms.begin(), anchor_sms.end()))
            throw UserError(fmt::format("the launch allowing bits {} and {} did not reach the anchor's SMs {}: results "
                                        "cannot be trusted",
                                        scan.anchor_bit, bit, fmt::join(anchor_sms, " ")));
        scan.bit_sms[bit] = minus(reached, anchor_sms);
    }
    return scan;
}

}  // namespace gpupart
