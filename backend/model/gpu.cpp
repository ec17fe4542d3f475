#include "model/gpu.hpp"

#include <array>
#include <utility>

namespace gpupart {
namespace {
constexpr std::array<std::pair<EngineKind, std::string_view>, 9> kEngineKinds{{
    {EngineKind::graphics, "graphics"},
    {EngineKind::copy, "copy"},
    {EngineKind::video_decoder, "video_decoder"},
    {EngineKind::video_encoder, "video_encoder"},
    {EngineKind::jpeg, "jpeg"},
    {EngineKind::optical_flow, "optical_flow"},
    {EngineKind::security, "security"},
    {EngineKind::sequencer, "sequencer"},
    {EngineKind::other, "other"},
}};
}  // namespace

std::string_view to_string(EngineKind kind) {
    for (const auto& [value, name] : kEngineKinds)
        if (value == kind) return name;
    return "other";
}

std::optional<EngineKind> engine_kind_from_string(std::string_view text) {
    for (const auto& [value, name] : kEngineKinds)
        if (name == text) return value;
    return std::nullopt;
}

}  // namespace gpupart
