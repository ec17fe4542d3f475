#include "render_export.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/install_paths.hpp"
#include "platform/mps_control.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart::cli {
namespace {

std::string renderer_path() {
    try {
        return find_helper(running_executable(), "gpupart-render", "GPUPART_RENDER").string();
    } catch (const UserError& error) {
        throw UserError(fmt::format("{}: --png and --svg need gpupart-render (the Qt build; package gpupart-gui); export --json here and "
                                    "draw it elsewhere with `gpupart export --snapshot FILE --png OUT`", error.what()));
    }
}

}  // namespace

void render_export(const Snapshot& snapshot, int gpu_index, const std::string& title, const std::string& png_path,
                   const std::string& svg_path) {
    const CommandResult result =
        run_command({renderer_path(), std::to_string(gpu_index), title, png_path, svg_path}, snapshot_text(snapshot), 60000);
    if (result.exit_code != 0) {
        std::string line = result.output.empty() ? fmt::format("gpupart-render failed (exit {})", result.exit_code) : result.output;
        while (!line.empty() && line.back() == '\n') line.pop_back();
        throw UserError(line);
    }
}

}  // namespace gpupart::cli
