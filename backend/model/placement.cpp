#include "model/placement.hpp"

#include <algorithm>
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
