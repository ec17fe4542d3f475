#include "planner/curve_json.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/user_error.hpp"
#include "planner/classification.hpp"

namespace gpupart {
namespace {

using Json = nlohmann::ordered_json;
constexpr std::string_view kFormat = "gpupart-scaling-curve";
constexpr int kVersion = 1;
constexpr std::size_t kMaxText = 64 * 1024;  // a command line longer than this is not one we wrote

[[noreturn]] void fail(std::string_view origin, std::string_view what) {
    throw UserError(fmt::format("{}: {}; this is not a scaling curve gpupart can use: measure the process again "
                                "(gpupart measure) to replace it, or delete the file",
                                origin, what));
}

const Json& field(const Json& object, const char* key, std::string_view origin) {
    auto it = object.find(key);
    if (it == object.end()) fail(origin, fmt::format("'{}' is missing", key));
    return *it;
}

std::string text_field(const Json& object, const char* key, std::string_view origin) {
    const Json& value = field(object, key, origin);
    if (!value.is_string()) fail(origin, fmt::format("'{}' must be a string", key));
    const auto& text = value.get_ref<const std::string&>();
    if (text.size() > kMaxText) fail(origin, fmt::format("'{}' is longer than {} bytes", key, kMaxText));
    return text;
}

double number_field(const Json& object, const char* key, std::string_view origin) {
    const Json& value = field(object, key, origin);
    if (!value.is_number()) fail(origin, fmt::format("'{}' must be a number", key));
    const double number = value.get<double>();
    if (!std::isfinite(number)) fail(origin, fmt::format("'{}' must be finite", key));
    return number;
}

std::int64_t integer_field(const Json& object, const char* key, std::string_view origin, std::int64_t low,
                           std::int64_t high) {
    const Json& value = field(object, key, origin);
    if (!value.is_number_integer()) fail(origin, fmt::format("'{}' must be a whole number", key));
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(high))
        fail(origin, fmt::format("'{}' is above {}", key, high));
    const std::int64_t number = value.get<std::int64_t>();
    if (number < low || number > high) fail(origin, fmt::format("'{}' must be from {} to {}", key, low, high));
    return number;
}

CurvePoint point_from(const Json& item, std::string_view origin) {
    if (!item.is_object()) fail(origin, "every entry of 'points' must be an object");
    CurvePoint p;
    p.tpcs = static_cast<int>(integer_field(item, "tpcs", origin, 1, 1024));
    p.rate = number_field(item, "rate", origin);
    p.seconds = number_field(item, "seconds", origin);
    p.launches = static_cast<std::uint64_t>(
        integer_field(item, "launches", origin, 0, std::numeric_limits<std::int64_t>::max()));
    if (p.rate < 0 || p.seconds < 0) fail(origin, "a point's rate and seconds cannot be negative");
    return p;
}

// The fit and class, for a person reading the file (never read back).
Json analysis(const StoredCurve& curve) {
    Json out;
    try {
        const CurveFit fit = fit_curve(curve.points);
        out["fit"] = {{"a", fit.model.a},
                      {"b", fit.model.b},
                      {"r_squared", fit.r_squared},
                      {"rms_relative_residual", fit.rms_relative_residual},
                      {"b_clamped", fit.b_clamped}};
        const Classification c = classify_measured(curve.points, fit, curve.total_tpcs, curve.memory_throughput);
        out["class"] = to_string(c.intensity);
        out["class_reason"] = c.reason;
    } catch (const UserError& e) {
        out["fit"] = nullptr;
        out["fit_problem"] = e.what();
    }
    return out;
}

std::uint64_t fnv1a(std::uint64_t hash, std::string_view bytes) {
    for (unsigned char c : bytes) {
        hash ^= c;
        hash *= 1099511628211ULL;
    }
    return hash;
}

}  // namespace

std::string curve_file_name(const CurveIdentity& identity) {
    std::uint64_t hash = 14695981039346656037ULL;
    // NUL between the parts: ("ab", "c") and ("a", "bc") must not collide by construction.
    for (const std::string* part : {&identity.user, &identity.command, &identity.gpu}) {
        hash = fnv1a(hash, *part);
        hash = fnv1a(hash, std::string_view("\0", 1));
    }
    return fmt::format("curve-{:016x}.json", hash);
}

std::string curve_to_json(const StoredCurve& curve) {
    Json out;
    out["format"] = kFormat;
    out["version"] = kVersion;
    out["command"] = curve.identity.command;
    out["user"] = curve.identity.user;
    out["gpu"] = curve.identity.gpu;
    out["total_tpcs"] = curve.total_tpcs;
    out["measured"] = curve.measured;
    out["rate_meaning"] = curve.rate_meaning;
    out["memory_throughput"] = curve.memory_throughput ? Json(*curve.memory_throughput) : Json(nullptr);
    Json points = Json::array();
    for (const CurvePoint& p : curve.points)
        points.push_back({{"tpcs", p.tpcs}, {"rate", p.rate}, {"seconds", p.seconds}, {"launches", p.launches}});
    out["points"] = std::move(points);
    out.update(analysis(curve));
    // Command lines are not always UTF-8; replace what JSON cannot carry rather than fail the save.
    return out.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

StoredCurve parse_curve_json(std::string_view text, std::string_view origin) {
    if (text.size() > kMaxCurveBytes) fail(origin, fmt::format("it is larger than {} bytes", kMaxCurveBytes));
    const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) fail(origin, "it is not valid JSON");
    if (!doc.is_object()) fail(origin, "it is not a JSON object");
    if (text_field(doc, "format", origin) != kFormat) fail(origin, fmt::format("'format' is not '{}'", kFormat));
    const auto version = integer_field(doc, "version", origin, 0, std::numeric_limits<int>::max());
    if (version != kVersion)
        fail(origin, fmt::format("it is version {}, this gpupart reads version {}", version, kVersion));

    StoredCurve curve;
    curve.identity.command = text_field(doc, "command", origin);
    curve.identity.user = text_field(doc, "user", origin);
    curve.identity.gpu = text_field(doc, "gpu", origin);
    curve.total_tpcs = static_cast<int>(integer_field(doc, "total_tpcs", origin, 1, 1024));
    curve.measured = text_field(doc, "measured", origin);
    curve.rate_meaning = text_field(doc, "rate_meaning", origin);
    const Json& memory = field(doc, "memory_throughput", origin);
    if (!memory.is_null()) {
        const double value = number_field(doc, "memory_throughput", origin);
        if (value < 0 || value > 1) fail(origin, "'memory_throughput' must be a fraction from 0 to 1");
        curve.memory_throughput = value;
    }
    const Json& points = field(doc, "points", origin);
    if (!points.is_array()) fail(origin, "'points' must be an array");
    if (points.size() > kMaxCurvePoints) fail(origin, fmt::format("it has more than {} points", kMaxCurvePoints));
    for (const Json& item : points) {
        CurvePoint p = point_from(item, origin);
        if (p.tpcs > curve.total_tpcs)
            fail(origin, fmt::format("a point has {} TPCs, more than the GPU's {}", p.tpcs, curve.total_tpcs));
        curve.points.push_back(p);
    }
    return curve;
}

}  // namespace gpupart
