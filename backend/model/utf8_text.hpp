#pragma once
// Text from another process (a command line in a slot, a profile name in a rules table) may hold any
// bytes. JSON output must be valid UTF-8 (nlohmann::json throws on anything else), so such text is made
// valid where it enters gpupart: every byte that is not part of a well-formed UTF-8 sequence becomes
// U+FFFD. Display escaping of control characters is one_line()'s job (user_error.hpp).
#include <string>
#include <string_view>

namespace gpupart {

std::string valid_utf8(std::string_view bytes);

}  // namespace gpupart
