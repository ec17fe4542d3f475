#pragma once
// ASCII case folding for names that are ASCII by definition (UUIDs, PCI bus ids, GPC names, keywords), as
// the tools they come from compare them: never a locale's idea of case.
#include <string>
#include <string_view>

namespace gpupart {

inline std::string ascii_lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)  // not std::tolower: it follows the locale a GUI or terminal program set
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

}  // namespace gpupart
