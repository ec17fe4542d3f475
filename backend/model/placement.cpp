#include "model/placement.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {

struct Pool {
    int gpc;  // -1 = TPCs of undetermined GPC
    std::vector<int> bits;
};

std::vector<Pool> available_pools(const Gpu& gpu, const TpcMask& available) {
    std::vector<Pool> pools;
    for (const Gpc& gpc : gpu.gpcs) {
        Pool pool{gpc.index, (gpc_tpcs(gpu, gpc.index) & available).bits()};
        if (!pool.bits.empty()) pools.push_back(std::move(pool));
    }
    return pools;
}

void take(TpcMask& into, const std::vector<int>& bits, std::size_t count) {
    for (std::size_t i = 0; i < count && i < bits.size(); ++i) into.set(bits[i]);
}

}  // namespace

TpcMask place_tpcs_packed(const Gpu& gpu, int count, const TpcMask& available) {
    const TpcMask usable = available & real_tpcs(gpu);
    if (count <= 0) throw UserError("a TPC count must be at least 1");
    if (count > usable.count())
        throw UserError(fmt::format("{} TPCs requested but only {} are available on {}", count, usable.count(),
                                    gpu_display_name(gpu)));
    std::vector<Pool> pools = available_pools(gpu, available);
    TpcMask placed;
    // Whole GPCs that add up to the count exactly leave no GPC split (the GPC packing of Bakita & Anderson, RTAS 2023; a split GPC is
    // the partial-gpc finding): 33 TPCs of an H100 as 9+8+8+8, not four 8s and one TPC of a fifth GPC. Of
    // those sets, the fewest GPCs, then the lowest GPC numbers. A GPU has at most a few dozen GPCs with TPCs
    // free; past 20 the search would be too long and best fit alone decides.
    if (pools.size() <= 20) {
        std::optional<std::uint32_t> best;
        for (std::uint32_t set = 1; set < (1u << pools.size()); ++set) {
            std::size_t sum = 0;
            for (std::size_t i = 0; i < pools.size(); ++i)
                if (set & (1u << i)) sum += pools[i].bits.size();
            if (sum != static_cast<std::size_t>(count)) continue;
            const auto lower_first = [](std::uint32_t a, std::uint32_t b) {  // the set of lower GPC numbers
                for (std::uint32_t bit = 1; bit != 0; bit <<= 1)
                    if ((a & bit) != (b & bit)) return (a & bit) != 0;
                return false;
            };
            if (!best || std::popcount(set) < std::popcount(*best) ||
                (std::popcount(set) == std::popcount(*best) && lower_first(set, *best)))
                best = set;
        }
        if (best) {
            for (std::size_t i = 0; i < pools.size(); ++i)
                if (*best & (1u << i)) take(placed, pools[i].bits, pools[i].bits.size());
            return placed;
        }
    }
    std::size_t left = static_cast<std::size_t>(count);
    while (left > 0 && !pools.empty()) {
        // Best fit: the smallest GPC that holds what is left.
        auto fit = std::min_element(pools.begin(), pools.end(), [left](const Pool& a, const Pool& b) {
            const bool a_fits = a.bits.size() >= left;
            const bool b_fits = b.bits.size() >= left;
            if (a_fits != b_fits) return a_fits;
            if (a_fits) return a.bits.size() < b.bits.size();
            return a.bits.size() > b.bits.size();  // none fits: the largest, taken whole
        });
        const std::size_t n = std::min(left, fit->bits.size());
        take(placed, fit->bits, n);
        left -= n;
        pools.erase(fit);
    }
    if (left > 0) take(placed, (undetermined_gpc_tpcs(gpu) & available).bits(), left);
    return placed;
}

TpcMask place_gpcs(const Gpu& gpu, int count, const TpcMask& available) {
    std::vector<Pool> pools = available_pools(gpu, available);
    if (count <= 0) throw UserError("a GPC count must be at least 1");
    if (count > static_cast<int>(pools.size()))
        throw UserError(fmt::format("{} GPCs requested but only {} have available TPCs on {}", count, pools.size(),
                                    gpu_display_name(gpu)));
    std::stable_sort(pools.begin(), pools.end(),
                     [](const Pool& a, const Pool& b) { return a.bits.size() > b.bits.size(); });
    TpcMask placed;
    for (int i = 0; i < count; ++i) take(placed, pools[static_cast<std::size_t>(i)].bits, pools[static_cast<std::size_t>(i)].bits.size());
    return placed;
}

}  // namespace gpupart
