// GPC map files left by the commands that read a topology (gpc_maps.hpp).
#include "gpc_maps.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "registry/gpc_map.hpp"
#include "registry/registry.hpp"

namespace gpupart::cli {

std::vector<std::string> write_gpc_maps(const ChosenSnapshot& chosen) {
    std::vector<std::string> written;
    for (const Gpu& gpu : chosen.snapshot.gpus) {
        if (!gpc_map_unavailable_reason(gpu).empty()) continue;
        try {
            const auto directory = user_directory(Registry::default_directory(), ::getuid(), true);
            if (!directory) continue;
            written.push_back(write_gpc_map(*directory, gpc_map_of(gpu, chosen.live ? "live" : "snapshot file")));
        } catch (const UserError& error) {
            fmt::print(stderr, "gpupart: warning: GPC map of GPU {} not written: {}\n", gpu.index, one_line(error.what()));
        }
    }
    return written;
}

}  // namespace gpupart::cli
