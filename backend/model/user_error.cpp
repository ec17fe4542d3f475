#include "model/user_error.hpp"

#include <fmt/format.h>

namespace gpupart {

std::string one_line(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (byte < 0x20 || byte == 0x7f) out += fmt::format("\\x{:02x}", byte);
        else out += c;
    }
    return out;
}

}  // namespace gpupart
