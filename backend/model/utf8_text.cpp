#include "model/utf8_text.hpp"

namespace gpupart {
namespace {

// The length of the well-formed UTF-8 sequence at the start of `rest` (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 if it is not one.
std::size_t sequence_length(std::string_view rest) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(rest[i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) return 1;
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xbf;  // the allowed range of the second byte
    if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead == 0xe0) length = 3, low = 0xa0;
    else if (lead >= 0xe1 && lead <= 0xec) length = 3;
    else if (lead == 0xed) length = 3, high = 0x9f;
    else if (lead >= 0xee && lead <= 0xef) length = 3;
    else if (lead == 0xf0) length = 4, low = 0x90;
    else if (lead >= 0xf1 && lead <= 0xf3) length = 4;
    else if (lead == 0xf4) length = 4, high = 0x8f;
    else return 0;
    if (rest.size() < length || byte(1) < low || byte(1) > high) return 0;
    for (std::size_t i = 2; i < length; ++i)
        if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
    return length;
}

}  // namespace

std::string valid_utf8(std::string_view bytes) {
    std::string text;
    text.reserve(bytes.size());
    while (!bytes.empty()) {
        const std::size_t length = sequence_length(bytes);
        if (length == 0) {
            text += "\xef\xbf\xbd";  // U+FFFD REPLACEMENT CHARACTER
            bytes.remove_prefix(1);
        } else {
            text.append(bytes.substr(0, length));
            bytes.remove_prefix(length);
        }
    }
    return text;
}

}  // namespace gpupart
