#include "registry/app_masks.hpp"

#include <fmt/format.h>

#include "registry/slot_file.hpp"  // mask_from_words

namespace gpupart {

SlotAppMasks app_masks_of(const std::optional<gpupart_app_masks>& consistent, const gpupart_app_masks& latest) {
    SlotAppMasks app;
    // Flags and counters: the latest values (the counters are relaxed atomics outside the seqlock; a flag
    // only ever gains bits, so the latest read is the best).
    const gpupart_app_masks& flags_from = consistent ? *consistent : latest;
    app.in_use = (flags_from.flags & GPUPART_APP_IN_USE) != 0;
    app.numbered = (flags_from.flags & GPUPART_APP_NUMBERED) != 0;
    app.app_launches = latest.app_launches;
    app.next_launches = latest.next_launches;
    app.outside_bound = latest.outside_bound;
    app.unmapped_launches = latest.unmapped_launches;
    if (!consistent) {
        app.publishing = app.in_use;
        return app;
    }
    const gpupart_app_masks& block = *consistent;
    app.global_set = (block.flags & GPUPART_APP_GLOBAL_SET) != 0;
    if (app.global_set) app.global_disable = mask_from_words(block.global_disable);
    app.streams_hidden = block.streams_hidden;
    std::uint32_t count = block.stream_count;
    if (count > GPUPART_APP_STREAMS) {
        app.problem = fmt::format("the program's mask block says {} streams, more than the {} a slot holds: the first {} "
                                  "are shown", count, GPUPART_APP_STREAMS, GPUPART_APP_STREAMS);
        count = GPUPART_APP_STREAMS;
    }
    for (std::uint32_t i = 0; i < count; ++i) {
        const gpupart_app_stream& entry = block.streams[i];
        app.streams.push_back(AppStreamMask{entry.stream, mask_from_words(entry.disable), entry.launches});
    }
    if (!app.in_use && (app.global_set || !app.streams.empty()) && app.problem.empty())
        app.problem = "the program's mask block holds masks but does not say the program uses the API: shown as found";
    return app;
}

EffectiveTpcs effective_tpcs(const TpcMask& chosen, const std::optional<TpcMask>& bound, const std::optional<TpcMask>& real) {
    const TpcMask all = ~TpcMask{};
    const TpcMask within = real.value_or(all);
    const TpcMask both = chosen & bound.value_or(all) & within;
    if (!both.empty()) return {both, false};
    // No real TPC in the program's choice inside the bound: the launch runs on the operator's mask alone.
    return {bound.value_or(all) & within, true};
}

std::string allowed_text(const TpcMask& allowed, const std::optional<TpcMask>& real) {
    if (real) {
        const TpcMask here = allowed & *real;
        return here.empty() ? "(none)" : here.to_list();
    }
    if (allowed == ~TpcMask{}) return "all";
    // An _ext disable mask of a few TPCs allows everything above them too (bit 127 clear): said as the few
    // it leaves out rather than as "1-127". (A 64-bit mask disables TPCs 64-127: decision 3.)
    if (allowed.test(TpcMask::kWidth - 1)) return "all but " + (~allowed).to_list();
    return allowed.empty() ? "(none)" : allowed.to_list();
}

std::vector<AppMaskRow> app_mask_rows(const SlotAppMasks& app, const std::optional<TpcMask>& bound, const std::optional<TpcMask>& real) {
    std::vector<AppMaskRow> rows;
    if (!app.in_use || app.publishing) return rows;
    rows.push_back({"global", app.global_set, app.global_allowed(), effective_tpcs(app.global_allowed(), bound, real), std::nullopt});
    for (const AppStreamMask& stream : app.streams)
        rows.push_back({"stream " + stream_text(stream.stream), true, stream.allowed(), effective_tpcs(stream.allowed(), bound, real),
                        stream.launches});
    return rows;
}

std::string app_mask_row_text(const AppMaskRow& row, const std::optional<TpcMask>& real) {
    std::string text = fmt::format("{} {} → {}", row.what, row.set ? allowed_text(row.chosen, real) : "not set (all)",
                                   allowed_text(row.effective.tpcs, real));
    if (row.effective.outside_bound) text += " (none inside the operator's mask: runs on it)";
    if (row.launches) text += fmt::format(" · {} launch{}", *row.launches, *row.launches == 1 ? "" : "es");
    return text;
}

std::string stream_text(std::uint64_t stream) { return stream == 0 ? "default" : fmt::format("{:#x}", stream); }

std::string app_masks_summary(const SlotAppMasks& app, const std::optional<TpcMask>& real) {
    if (!app.in_use) return "";
    std::string text;
    if (app.publishing)
        text = "masks being written";
    else
        text = fmt::format("global {}", app.global_set ? allowed_text(app.global_allowed(), real) : "not set");
    const std::size_t streams = app.streams.size() + app.streams_hidden;
    if (!app.publishing || app.streams_hidden > 0)
        text += fmt::format(" · {} stream mask{}", streams, streams == 1 ? "" : "s");
    text += fmt::format(" · {} launch{} chose their mask", app.app_launches, app.app_launches == 1 ? "" : "es");
    if (app.outside_bound > 0) text += fmt::format(" ({} outside the operator's mask)", app.outside_bound);
    return text;
}

}  // namespace gpupart
