#include "sources/probe_stream_mask.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpupart {
namespace {

using Disable = std::array<std::uint32_t, 4>;

// A mask that keeps every TPC number out except those in `numbers`.
Disable allowing(std::initializer_list<int> numbers) {
    Disable disable{~0u, ~0u, ~0u, ~0u};
    for (const int k : numbers) disable[static_cast<std::size_t>(k / 32)] &= ~(1u << (k % 32));
    return disable;
}

std::string sms_text(const std::vector<int>& sms) {
    return sms.empty() ? std::string("none") : fmt::format("{}", fmt::join(sms, ","));
}

}  // namespace

StreamMaskVerdict verify_stream_mask(StreamMaskLauncher& launcher, const std::map<int, std::vector<int>>& bit_sms,
                                     int blocks) {
    StreamMaskVerdict verdict;
    std::vector<int> real_bits;
    std::vector<int> every_sm;
    for (const auto& [bit, sms] : bit_sms) {
        if (sms.empty()) continue;
        real_bits.push_back(bit);
        every_sm.insert(every_sm.end(), sms.begin(), sms.end());
    }
    std::sort(every_sm.begin(), every_sm.end());
    const int count = static_cast<int>(real_bits.size());
    if (count == 0 || count > 128) {
        verdict.why = fmt::format("the scan found {} real TPCs: a stream mask holds 1 to 128", count);
        return verdict;
    }
    // One or two TPCs (2-4 SMs) need few blocks to show every SM they drive, and one SM too many: a kernel
    // of `blocks` one-per-SM blocks on 2 SMs would take blocks/2 waves.
    const int few_blocks = std::min(blocks, 8);
    const auto expect = [&](const Disable& disable, const std::vector<int>& wanted, const std::string& what) {
        std::vector<int> reached = launcher.launch(disable, wanted.size() > 4 ? blocks : few_blocks);
        ++verdict.launches;
        if (reached == wanted) return true;
        verdict.why = fmt::format("{} ran on SMs {}, not on SMs {}", what, sms_text(reached), sms_text(wanted));
        return false;
    };
    try {
        if (!expect(Disable{}, every_sm, "a stream mask keeping nothing out")) return verdict;
        for (int k = 0; k < count; ++k) {
            const std::vector<int>& sms = bit_sms.at(real_bits[static_cast<std::size_t>(k)]);
            const std::string what = fmt::format("stream mask TPC {} (descriptor bit {}, real bit number {})", k,
                                                 real_bits[static_cast<std::size_t>(k)], k);
            if (!expect(allowing({k}), sms, what)) return verdict;
        }
        std::vector<int> both = bit_sms.at(real_bits.front());
        const std::vector<int>& last = bit_sms.at(real_bits.back());
        both.insert(both.end(), last.begin(), last.end());
        std::sort(both.begin(), both.end());
        if (count > 1 && !expect(allowing({0, count - 1}), both, fmt::format("stream mask TPCs 0 and {}", count - 1)))
            return verdict;
    } catch (const StreamMaskUnusable& error) {
        verdict.why = error.what();
        return verdict;
    }
    verdict.verified = true;
    verdict.why = fmt::format("each of the {} TPC numbers ran exactly on its SMs ({} launches)", count, verdict.launches);
    return verdict;
}

}  // namespace gpupart
