#pragma once
// `gpupart export --png/--svg`: the floorplan drawn headless by the very painter the GUI uses. The Qt
// part runs in gpupart-render (built with Qt, installed next to gpupart), fed the snapshot on stdin.
#include <string>

#include "model/gpu.hpp"

namespace gpupart::cli {

// Throws UserError with gpupart-render's one line (not installed: a build without Qt; unwritable file).
void render_export(const Snapshot& snapshot, int gpu_index, const std::string& title, const std::string& png_path,
                   const std::string& svg_path);

}  // namespace gpupart::cli
