// libFuzzer target for the registry files a hostile local user can write: slot files and profile rules
// tables (registry_file_properties.hpp). Any exception other than the documented one-line errors, any
// sanitizer finding and any broken property aborts: each is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "registry_file_properties.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string broken =
        gpupart::fuzz::check_registry_file_properties(std::string_view(reinterpret_cast<const char*>(data), size));
    if (!broken.empty()) {
        std::fprintf(stderr, "fuzz_registry_files: %s\n", broken.c_str());
        std::abort();
    }
    return 0;
}
