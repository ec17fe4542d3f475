#include "planner/plan_placement.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/placement.hpp"
#include "model/user_error.hpp"

namespace gpupart {

std::vector<TpcMask> place_partitions_packed(const Gpu& gpu, const std::vector<int>& tpc_counts,
                                             const TpcMask& available) {
    const int usable = (available & real_tpcs(gpu)).count();
    const int wanted = std::accumulate(tpc_counts.begin(), tpc_counts.end(), 0);
    if (wanted > usable)
        throw UserError(fmt::format("the partitions need {} TPCs but only {} are available on {}", wanted, usable,
                                    gpu_display_name(gpu)));
    std::vector<std::size_t> order(tpc_counts.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t l, std::size_t r) { return tpc_counts[l] > tpc_counts[r]; });
    std::vector<TpcMask> masks(tpc_counts.size());
    TpcMask left = available;
    for (std::size_t i : order) {
        masks[i] = place_tpcs_packed(gpu, tpc_counts[i], left);  // throws on a count below 1
        left &= ~masks[i];
    }
    return masks;
}

}  // namespace gpupart
