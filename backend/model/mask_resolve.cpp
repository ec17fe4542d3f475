#include "model/mask_resolve.hpp"
#include "model/overloaded.hpp"

#include <cmath>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/placement.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {


TpcMask named_bits(const MaskExpression& expression, const std::vector<MaskTerm>& terms, const Gpu& gpu,
                   std::vector<std::string>& topology_notes) {
    TpcMask named;
    const int gpcs = static_cast<int>(gpu.gpcs.size());
    for (const MaskTerm& term : terms) {
        std::visit(Overloaded{
                       [&](const BitRange& range) { named |= TpcMask::range(range.first, range.last); },
                       [&](const HexBits& hex) { named |= hex.mask; },
                       [&](const GpcRange& range) {
                           if (range.last >= gpcs)
                               throw UserError(fmt::format(
                                   "mask '{}': {} does not exist on {} ({})", expression.text, gpc_name(range.last),
                                   gpu_display_name(gpu),
                                   gpcs == 0 ? std::string("no GPC is known") : fmt::format("gpc0-gpc{}", gpcs - 1)));
                           for (int gpc = range.first; gpc <= range.last; ++gpc) named |= gpc_tpcs(gpu, gpc);
                       },
                   },
                   term);
    }
    const TpcMask beyond = named & ~TpcMask::range(0, gpu.mask_width - 1);
    if (!beyond.empty())
        throw UserError(fmt::format("mask '{}': bits {} are beyond the {}-bit TPC mask of {}", expression.text,
                                    beyond.to_list(), gpu.mask_width, gpu_display_name(gpu)));
    if (!undetermined_gpc_tpcs(gpu).empty())
        for (const MaskTerm& term : terms)
            if (std::holds_alternative<GpcRange>(term)) {
                topology_notes.push_back(fmt::format("TPCs {} have no known GPC, so no gpcN name includes them",
                                            undetermined_gpc_tpcs(gpu).to_list()));
                break;
            }
    return named;
}

}  // namespace

ResolvedMask resolve_mask(const MaskExpression& expression, const Gpu& gpu) {
    const TpcMask real = real_tpcs(gpu);
    if (real.empty())
        throw UserError(fmt::format("mask '{}': {} has no known TPC map, so no mask can be checked", expression.text,
                                    gpu_display_name(gpu)));
    ResolvedMask result;
    std::visit(Overloaded{
                   [&](const std::vector<MaskTerm>& terms) {
                       const TpcMask named = named_bits(expression, terms, gpu, result.topology_notes);
                       result.mask = named & real;
                       result.dropped_holes = named & ~real;
                   },
                   [&](const AllTpcs&) { result.mask = real; },
                   [&](const TpcCount& count) {
                       result.mask = place_tpcs_packed(gpu, count.count, real);
                       result.notes.push_back(fmt::format("{} TPC{} placed GPC-packed", count.count, count.count == 1 ? "" : "s"));
                   },
                   [&](const GpcCount& count) {
                       result.mask = place_gpcs(gpu, count.count, real);
                       result.notes.push_back(fmt::format("{} whole GPCs, largest first", count.count));
                   },
                   [&](const SharePercent& share) {
                       const int count = std::max(1, static_cast<int>(std::lround(share.percent / 100.0 * real.count())));
                       result.mask = place_tpcs_packed(gpu, count, real);
                       result.notes.push_back(fmt::format("{:g}% of {} TPCs rounds to {} TPCs, placed GPC-packed",
                                                          share.percent, real.count(), count));
                   },
               },
               expression.value);
    if (!result.dropped_holes.empty())
        result.notes.push_back(fmt::format("dropped bits {}: no TPC there (holes)", result.dropped_holes.to_list()));
    if (result.mask.empty() && result.dropped_holes.empty())
        throw UserError(fmt::format("mask '{}' selects no TPC at all", expression.text));
    if (result.mask.empty())
        throw UserError(fmt::format("mask '{}' selects no real TPC on {}: bits {} are holes", expression.text,
                                    gpu_display_name(gpu), result.dropped_holes.to_list()));
    return result;
}

ResolvedMask resolve_mask(std::string_view expression, const Gpu& gpu) {
    return resolve_mask(parse_mask_expression(expression), gpu);
}

}  // namespace gpupart
