#include "run_gpu_choice.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "model/cuda_visible_devices.hpp"
#include "model/user_error.hpp"

namespace gpupart::cli {
namespace {

std::optional<std::string_view> environment(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::optional<std::string_view>(value) : std::nullopt;
}

VisibleGpus visible_gpus(const ChosenSnapshot& chosen) {
    return resolve_cuda_visible_devices(chosen.snapshot.gpus, environment("CUDA_VISIBLE_DEVICES"),
                                        environment("CUDA_DEVICE_ORDER"));
}

}  // namespace

ChosenSnapshot run_topology(SnapshotOptions& options, bool only) {
    // A live read for a partition: the start of every confined command waits for it (no NVML where the
    // RM controls give what this needs).
    ChosenSnapshot chosen = load_chosen(options, LiveRead::partition);
    const auto value = environment("CUDA_VISIBLE_DEVICES");
    if (!only && value) {
        const VisibleGpus visible = visible_gpus(chosen);
        if (!visible.problem.empty()) throw UserError(visible.problem + ": nothing started");
        if (options.gpu.empty()) {
            if (visible.indexes.empty())
                throw UserError(fmt::format("CUDA_VISIBLE_DEVICES={} lets the command see no GPU: there is no GPU to "
                                            "confine (unset it, or name a GPU with --gpu and --only); nothing started",
                                            value->empty() ? "(empty)" : one_line(*value, 80)));
            options.gpu = std::to_string(visible.indexes.front());
        } else {
            const int named = gpu_index(chosen, options.gpu);
            if (std::find(visible.indexes.begin(), visible.indexes.end(), named) == visible.indexes.end())
                throw UserError(fmt::format("--gpu {} is GPU {}, which CUDA_VISIBLE_DEVICES={} hides from the command: it "
                                            "could not open it (--only shows it that GPU instead); nothing started",
                                            one_line(options.gpu, 40), named, one_line(*value, 80)));
        }
    }
    require_mask_bits(chosen, options);
    return chosen;
}

std::size_t visible_gpu_count(const ChosenSnapshot& chosen, bool only) {
    return only ? 1 : visible_gpus(chosen).indexes.size();
}

}  // namespace gpupart::cli
