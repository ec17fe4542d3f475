#include "model/user_error.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace gpupart {
namespace {

// The length of the UTF-8 sequence starting at `text[i]` and its code point, or 0 when the bytes there
// are not valid UTF-8 (overlong forms, surrogates and values past U+10FFFF included).
std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& code) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    char32_t least = 0;
    if (lead >= 0xc2 && lead <= 0xdf) length = 2, least = 0x80, code = lead & 0x1f;
    else if (lead >= 0xe0 && lead <= 0xef) length = 3, least = 0x800, code = lead & 0x0f;
    else if (lead >= 0xf0 && lead <= 0xf4) length = 4, least = 0x10000, code = lead & 0x07;
    else return 0;
    if (i + length > text.size()) return 0;
    for (std::size_t k = 1; k < length; ++k) {
        const auto next = static_cast<unsigned char>(text[i + k]);
        if ((next & 0xc0) != 0x80) return 0;
        code = (code << 6) | (next & 0x3f);
    }
    if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
    return length;
}

// Code points a terminal acts on (C1 controls: 0x9b is CSI on many) or that reorder the text shown
// after them (bidi embeddings, overrides and isolates: a command line could show as another one).
bool hidden_control(char32_t code) {
    return (code >= 0x80 && code <= 0x9f) || code == 0x061c || code == 0x200e || code == 0x200f ||
           (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

}  // namespace

std::string one_line(std::string_view text) { return one_line(text, std::string_view::npos); }

std::string valid_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        char32_t code = 0;
        const std::size_t length = static_cast<unsigned char>(text[i]) < 0x80 ? 1 : utf8_sequence(text, i, code);
        if (length == 0) {
            out += "\xef\xbf\xbd";  // U+FFFD
            ++i;
        } else {
            out.append(text.substr(i, length));
            i += length;
        }
    }
    return out;
}

std::string escape_hidden_in_json(std::string_view json) {
    std::string out;
    out.reserve(json.size());
    for (std::size_t i = 0; i < json.size();) {
        char32_t code = 0;
        const std::size_t length = static_cast<unsigned char>(json[i]) < 0x80 ? 1 : utf8_sequence(json, i, code);
        if (length > 1 && hidden_control(code)) {
            // Outside strings JSON is ASCII: such a character is always inside one, where \uNNNN means it.
            out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(code));
            i += length;
        } else {
            const std::size_t kept = length == 0 ? 1 : length;
            out.append(json.substr(i, kept));
            i += kept;
        }
    }
    return out;
}

std::string one_line(std::string_view text, std::size_t max_chars) {
    std::string out;
    out.reserve(text.size());
    std::size_t chars = 0;  // shown: an escape counts its every character, a UTF-8 sequence one
    for (std::size_t i = 0; i < text.size();) {
        const auto byte = static_cast<unsigned char>(text[i]);
        std::string piece;
        std::size_t consumed = 1;
        bool shown_as_one = false;  // a multi-byte character kept as it is
        if (byte == '\n') piece = "\\n";
        else if (byte == '\r') piece = "\\r";
        else if (byte == '\t') piece = "\\t";
        else if (byte < 0x20 || byte == 0x7f) piece = fmt::format("\\x{:02x}", byte);
        else if (byte < 0x80) piece = text.substr(i, 1);
        else if (char32_t code = 0; (consumed = utf8_sequence(text, i, code)) == 0) {
            piece = fmt::format("\\x{:02x}", byte);
            consumed = 1;
        } else if (hidden_control(code)) {
            piece = fmt::format("\\u{{{:04x}}}", static_cast<std::uint32_t>(code));
        } else {
            piece = text.substr(i, consumed);
            shown_as_one = true;
        }
        const std::size_t width = shown_as_one ? 1 : piece.size();
        if (chars + width > max_chars) break;
        out += piece;
        chars += width;
        i += consumed;
    }
    return out;
}

}  // namespace gpupart
