#include "sources/rm_engine_types.hpp"

#include <fmt/format.h>

namespace gpupart {
namespace {

struct Range {
    std::uint32_t first;
    std::uint32_t count;
    const char* prefix;
    EngineKind kind;
};

// Contiguous runs of engine type numbers; the instance is the offset inside the run.
constexpr Range kRanges[] = {
    {0x01, 8, "GR", EngineKind::graphics},
    {0x09, 10, "COPY", EngineKind::copy},
    {0x13, 8, "NVDEC", EngineKind::video_decoder},
    {0x1b, 3, "NVENC", EngineKind::video_encoder},
    {0x22, 1, "SW", EngineKind::other},
    {0x23, 1, "TSEC", EngineKind::security},
    {0x24, 1, "VIC", EngineKind::other},
    {0x26, 1, "SEC2", EngineKind::security},
    {0x2b, 8, "NVJPEG", EngineKind::jpeg},
    {0x33, 1, "OFA", EngineKind::optical_flow},
    {0x34, 10, "COPY", EngineKind::copy},  // COPY10..COPY19
};

}  // namespace

std::optional<RmEngineType> rm_engine_type(std::uint32_t type) {
    for (const Range& range : kRanges) {
        if (type < range.first || type >= range.first + range.count) continue;
        int instance = static_cast<int>(type - range.first);
        if (range.first == 0x34) instance += 10;
        const bool single = range.count == 1;
        // Single engines keep a 0 suffix only where the driver's own name has one (OFA0).
        std::string name = single && std::string_view(range.prefix) != "OFA" ? std::string(range.prefix)
                                                                              : fmt::format("{}{}", range.prefix, instance);
        return RmEngineType{std::move(name), range.kind, instance};
    }
    return std::nullopt;
}

}  // namespace gpupart
