// libFuzzer target for parse_profile (build with the "fuzz" preset). An input may only parse or throw
// UserError; any other exception escapes and any sanitizer finding aborts: both are bugs. The
// properties of profile_properties.hpp are checked too.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "profile_properties.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string broken = gpupart::fuzz::check_profile_properties(text);
    if (!broken.empty()) {
        std::fprintf(stderr, "fuzz_profile: %s\n", broken.c_str());
        std::abort();
    }
    return 0;
}
