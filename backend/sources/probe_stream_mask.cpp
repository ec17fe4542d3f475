#include "sources/probe_stream_mask.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/tpc_numbering.hpp"

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
    std::map<int, std::pair<int, std::vector<int>>> by_number;  // TPC number -> its descriptor bit and SMs
    std::vector<int> every_sm;
    for (const auto& [bit, sms] : bit_sms) {
        if (sms.empty()) continue;
        const std::optional<int> number = tpc_number(Tpc{bit, {}, {}, sms, {}, {}, {}});
        if (!number) {
            verdict.why = fmt::format("descriptor bit {} drives SMs {}, not one pair 2k,2k+1: the TPCs have no numbers to check "
                                      "a stream mask against",
                                      bit, sms_text(sms));
            return verdict;
        }
        by_number[*number] = {bit, sms};
        every_sm.insert(every_sm.end(), sms.begin(), sms.end());
    }
    std::sort(every_sm.begin(), every_sm.end());
    const int count = static_cast<int>(by_number.size());
    if (count == 0 || by_number.rbegin()->first >= 128) {
        verdict.why = fmt::format("the scan found {} real TPCs, numbered up to {}: a stream mask holds numbers 0 to 127", count,
                                  count == 0 ? -1 : by_number.rbegin()->first);
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
        for (const auto& [number, tpc] : by_number)
            if (!expect(allowing({number}), tpc.second, fmt::format("stream mask TPC {} (descriptor bit {})", number, tpc.first)))
                return verdict;
        const int first = by_number.begin()->first;
        const int last = by_number.rbegin()->first;
        std::vector<int> both = by_number.begin()->second.second;
        both.insert(both.end(), by_number.rbegin()->second.second.begin(), by_number.rbegin()->second.second.end());
        std::sort(both.begin(), both.end());
        if (count > 1 && !expect(allowing({first, last}), both, fmt::format("stream mask TPCs {} and {}", first, last)))
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
