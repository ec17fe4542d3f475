#include "model/mask_resolve.hpp"
#include "model/overloaded.hpp"

#include <cmath>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/placement.hpp"
#include "model/tpc_numbering.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {


std::string numbers_text(const TpcMask& real) {
    return real.empty() ? std::string("none") : real.to_list();
}

// The TPC numbers the terms name. Numbers the GPU does not have are refused; descriptor bits (bits:) are
// translated through the GPU's map, and those with no TPC (holes) go to `dropped_holes`.
TpcMask named_tpcs(const MaskExpression& expression, const std::vector<MaskTerm>& terms, const Gpu& gpu,
                   TpcMask& dropped_holes, std::vector<std::string>& topology_notes) {
    TpcMask named;
    const TpcMask real = real_tpcs(gpu);
    const int gpcs = static_cast<int>(gpu.gpcs.size());
    const auto check_numbers = [&](const TpcMask& numbers, std::string_view written) {
        const TpcMask missing = numbers & ~real;
        if (!missing.empty())
            throw UserError(fmt::format("mask '{}': {} names TPC{} {}, which {} does not have (its TPCs are {}; TPC k is SMs "
                                        "2k and 2k+1)", expression.text, written, missing.count() == 1 ? "" : "s", missing.to_list(),
                                        gpu_display_name(gpu), numbers_text(real)));
        named |= numbers;
    };
    for (const MaskTerm& term : terms) {
        std::visit(Overloaded{
                       [&](const BitRange& range) {
                           check_numbers(TpcMask::range(range.first, range.last),
                                         range.first == range.last ? fmt::format("{}", range.first)
                                                                   : fmt::format("{}-{}", range.first, range.last));
                       },
                       [&](const HexBits& hex) { check_numbers(hex.mask, hex.mask.to_hex()); },
                       [&](const DescriptorBits& descriptor) {
                           const TpcMask beyond = descriptor.bits & ~TpcMask::range(0, gpu.mask_width - 1);
                           if (!beyond.empty())
                               throw UserError(fmt::format("mask '{}': bits {} are beyond the {}-bit launch descriptor mask of {}",
                                                           expression.text, beyond.to_list(), gpu.mask_width, gpu_display_name(gpu)));
                           const TpcNumbering numbering = TpcNumbering::of(gpu);
                           named |= numbering.to_numbers(descriptor.bits, &dropped_holes);
                       },
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
        throw UserError(fmt::format("mask '{}': {} has no known TPC numbers (no source gave its TPCs' SMs), so no mask can be "
                                    "checked", expression.text, gpu_display_name(gpu)));
    ResolvedMask result;
    std::visit(Overloaded{
                   [&](const std::vector<MaskTerm>& terms) {
                       result.mask = named_tpcs(expression, terms, gpu, result.dropped_holes, result.topology_notes);
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
        result.notes.push_back(fmt::format("dropped descriptor bits {}: no TPC there (holes)", result.dropped_holes.to_list()));
    if (result.mask.empty() && result.dropped_holes.empty())
        throw UserError(fmt::format("mask '{}' selects no TPC at all", expression.text));
    if (result.mask.empty())
        throw UserError(fmt::format("mask '{}' selects no real TPC on {}: descriptor bits {} are holes", expression.text,
                                    gpu_display_name(gpu), result.dropped_holes.to_list()));
    return result;
}

ResolvedMask resolve_mask(std::string_view expression, const Gpu& gpu) {
    return resolve_mask(parse_mask_expression(expression), gpu);
}

}  // namespace gpupart
