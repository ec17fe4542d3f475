#include "model/mask_expression.hpp"

#include <cctype>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "model/ascii_text.hpp"
#include "model/user_error.hpp"

namespace gpupart {
namespace {

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
}

std::optional<int> parse_int(std::string_view text) {
    if (text.empty() || text.size() > 9) return std::nullopt;
    int value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
    return value;
}

[[noreturn]] void fail(std::string_view expression, std::string_view why) {
    throw UserError(fmt::format("mask '{}': {}", expression, why));
}

// "5", "5-9" -> [first, last]; nullopt if not of that form.
std::optional<std::pair<int, int>> parse_range(std::string_view text) {
    const auto dash = text.find('-');
    if (dash == std::string_view::npos) {
        auto value = parse_int(trim(text));
        if (!value) return std::nullopt;
        return std::pair{*value, *value};
    }
    auto first = parse_int(trim(text.substr(0, dash)));
    auto last = parse_int(trim(text.substr(dash + 1)));
    if (!first || !last) return std::nullopt;
    return std::pair{*first, *last};
}

MaskTerm parse_term(std::string_view expression, std::string_view term) {
    const std::string low = ascii_lower(term);
    if (low.starts_with("bits:")) {
        const std::string_view hex = trim(term.substr(5));
        auto bits = TpcMask::parse_hex(hex);
        if (!bits) fail(expression, fmt::format("'{}' is not bits: and a hex mask of at most 128 launch-descriptor bits (bits:0x3c0f)", term));
        return DescriptorBits{*bits};
    }
    if (low.starts_with("0x")) {
        auto mask = TpcMask::parse_hex(term);
        if (!mask) fail(expression, fmt::format("'{}' is not a hex mask of at most 128 bits", term));
        return HexBits{*mask};
    }
    if (low.starts_with("gpc")) {
        auto range = parse_range(std::string_view(low).substr(3));
        if (!range) fail(expression, fmt::format("'{}' is not a GPC name (write gpc2 or gpc2-3)", term));
        if (range->first > range->second) fail(expression, fmt::format("'{}' runs backwards", term));
        return GpcRange{range->first, range->second};
    }
    auto range = parse_range(term);
    if (!range)
        fail(expression, fmt::format("'{}' is not a TPC number, range, GPC or hex mask (examples: 0-3,9-16  gpc2  0xff)", term));
    if (range->first > range->second) fail(expression, fmt::format("'{}' runs backwards", term));
    if (range->second >= TpcMask::kWidth)
        fail(expression, fmt::format("TPC {} is beyond the {} TPCs a mask can name", range->second, TpcMask::kWidth));
    return BitRange{range->first, range->second};
}

// "8 tpcs", "8tpc", "2 gpcs", "25%"; nullopt if the text is not a count at all.
std::optional<MaskExpression> parse_count(std::string_view expression, const std::string& low) {
    if (low.ends_with('%')) {
        const std::string number(trim(std::string_view(low).substr(0, low.size() - 1)));
        double percent = 0;
        auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), percent);
        if (number.empty() || error != std::errc() || end != number.data() + number.size())
            fail(expression, "a share is written as a number and '%', like 25%");
        if (!(percent > 0 && percent <= 100)) fail(expression, "a share must be more than 0% and at most 100%");
        return MaskExpression{std::string(expression), SharePercent{percent}};
    }
    std::size_t digits = 0;
    while (digits < low.size() && std::isdigit(static_cast<unsigned char>(low[digits]))) ++digits;
    if (digits == 0) return std::nullopt;
    const std::string unit(trim(std::string_view(low).substr(digits)));
    const bool tpcs = unit == "tpc" || unit == "tpcs";
    const bool gpcs = unit == "gpc" || unit == "gpcs";
    if (!tpcs && !gpcs) return std::nullopt;
    auto count = parse_int(std::string_view(low).substr(0, digits));
    if (!count) fail(expression, "the count is too large");
    if (*count == 0) fail(expression, "a count of 0 selects no TPC");
    if (tpcs) return MaskExpression{std::string(expression), TpcCount{*count}};
    return MaskExpression{std::string(expression), GpcCount{*count}};
}

}  // namespace

MaskExpression parse_mask_expression(std::string_view text) {
    const std::string_view expression = trim(text);
    if (expression.empty()) throw UserError("mask is empty: give TPC numbers (0-3,9-16), a GPC (gpc2), a hex mask (0xff), a count (8 tpcs) or 'all'");
    const std::string low = ascii_lower(expression);
    if (low == "all") return MaskExpression{std::string(expression), AllTpcs{}};
    if (auto count = parse_count(expression, low)) return *count;

    std::vector<MaskTerm> terms;
    std::string_view rest = expression;
    while (true) {
        const auto comma = rest.find(',');
        const std::string_view term = trim(rest.substr(0, comma));
        if (term.empty()) fail(expression, "empty item between commas");
        terms.push_back(parse_term(expression, term));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return MaskExpression{std::string(expression), std::move(terms)};
}

}  // namespace gpupart
