#pragma once
// Which GPU `gpupart run` confines: the one the command will open. Without --gpu, the first GPU that
// CUDA_VISIBLE_DEVICES lets it see (as CUDA reads it); with --gpu, that GPU, refused when the command could
// not open it. --only replaces CUDA_VISIBLE_DEVICES with the chosen GPU, so it sees that one alone.
#include <cstddef>

#include "cli_common.hpp"

namespace gpupart::cli {

// The topology for a partition (partition_topology), with options.gpu set to the GPU to confine. Throws
// UserError (one line) when the command would see no GPU, or not the one named, or which cannot be told.
ChosenSnapshot run_topology(SnapshotOptions& options, bool only);

// How many GPUs the command will see: 1 with --only, else as CUDA_VISIBLE_DEVICES says (every GPU when unset).
std::size_t visible_gpu_count(const ChosenSnapshot& chosen, bool only);

}  // namespace gpupart::cli
