#include "app_masks_output.hpp"

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::size_t kStreamLines = 8;  // stream lines under the table per GPU; --json has every one

// The operator's mask on `gpu` and that GPU's real TPCs as the operator's writer knew them.
std::optional<TpcMask> bound_on(const SlotRecord& record, const std::string& gpu) {
    const GpuControl* control = record.control ? record.control->gpu(gpu) : nullptr;
    return control != nullptr && control->has_mask ? std::optional<TpcMask>(control->allowed) : std::nullopt;
}
std::optional<TpcMask> real_on(const SlotRecord& record, const std::string& gpu) {
    const GpuControl* control = record.control ? record.control->gpu(gpu) : nullptr;
    return control != nullptr && !control->real_tpcs.empty() ? std::optional<TpcMask>(control->real_tpcs) : std::nullopt;
}

Json choice_json(const TpcMask& allowed) {
    return Json{{"tpcs", allowed.to_list()}, {"mask", allowed.to_hex_padded()}, {"disable_mask", (~allowed).to_hex_padded()}};
}

Json effective_json(const EffectiveTpcs& effective) {
    return Json{{"tpcs", effective.tpcs.to_list()}, {"mask", effective.tpcs.to_hex_padded()},
                {"outside_bound", effective.outside_bound}};
}

}  // namespace

Json app_masks_json(const SlotAppMasks& app) {
    if (!app.in_use && app.problem.empty()) return nullptr;
    Json out{{"in_use", app.in_use}, {"publishing", app.publishing}};
    if (app.publishing) {
        out["global"] = nullptr;
        out["streams"] = nullptr;
    } else {
        Json global{{"set", app.global_set}};  // not set: every TPC
        global.update(choice_json(app.global_allowed()));
        out["global"] = std::move(global);
        out["streams"] = Json::array();
        for (const AppStreamMask& stream : app.streams) {
            Json entry{{"stream", stream_text(stream.stream)}};
            entry.update(choice_json(stream.allowed()));
            entry["launches"] = stream.launches;
            out["streams"].push_back(std::move(entry));
        }
    }
    out["streams_hidden"] = app.streams_hidden;
    out["app_launches"] = app.app_launches;
    out["next_launches"] = app.next_launches;
    out["outside_bound"] = app.outside_bound;
    out["problem"] = app.problem.empty() ? Json(nullptr) : Json(app.problem);
    return out;
}

Json app_effective_json(const SlotRecord& record, const std::string& gpu) {
    const auto rows = app_mask_rows(record.app, bound_on(record, gpu), real_on(record, gpu));
    if (rows.empty()) return nullptr;
    const auto bound = bound_on(record, gpu);
    Json out{{"bound", bound ? bound->to_list() : "all"}, {"real_tpcs_known", real_on(record, gpu).has_value()},
             {"global", effective_json(rows.front().effective)}, {"streams", Json::array()}};
    for (std::size_t i = 1; i < rows.size(); ++i) {
        Json entry{{"stream", stream_text(record.app.streams[i - 1].stream)}};
        entry.update(effective_json(rows[i].effective));
        out["streams"].push_back(std::move(entry));
    }
    return out;
}

std::vector<std::string> app_masks_lines(const SlotRecord& record, const std::optional<std::string>& only_gpu) {
    std::vector<std::string> lines;
    const SlotAppMasks& app = record.app;
    if (!app.in_use && app.problem.empty()) return lines;
    lines.push_back(fmt::format("  process {} chooses its own masks (libgpupart): {}", record.pid, app_masks_summary(app, std::nullopt)));
    if (!app.problem.empty()) lines.push_back("    problem: " + one_line(app.problem));
    for (const std::string& gpu : gpus_of(record)) {
        if (only_gpu && gpu != *only_gpu) continue;
        const auto real = real_on(record, gpu);
        const auto bound = bound_on(record, gpu);
        const auto rows = app_mask_rows(app, bound, real);
        if (rows.empty()) continue;
        lines.push_back(fmt::format("    on {} (operator's mask {}):", gpu.substr(0, 12), bound ? bound->to_list() : "none"));
        for (std::size_t i = 0; i < rows.size() && i <= kStreamLines; ++i) lines.push_back("      " + app_mask_row_text(rows[i], real));
        if (rows.size() > kStreamLines + 1)
            lines.push_back(fmt::format("      … {} more stream masks (gpupart list --json)", rows.size() - kStreamLines - 1));
    }
    return lines;
}

}  // namespace gpupart::cli
