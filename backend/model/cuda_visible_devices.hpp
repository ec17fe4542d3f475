#pragma once
// Which GPUs a CUDA program will see, as the CUDA driver reads CUDA_VISIBLE_DEVICES: a comma-separated
// list of device ordinals or GPU UUIDs (a unique prefix of one is enough), read up to the first entry
// that names no device; an empty value hides every GPU. gpupart uses it to confine the GPU a command will
// actually open (`gpupart run` without --gpu), never one it cannot open.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu.hpp"

namespace gpupart {

struct VisibleGpus {
    std::vector<int> indexes;  // gpupart's GPU indexes, in the order CUDA numbers them for the program
    std::string problem;       // not empty: which GPUs it sees cannot be told (one line, for the user)
};

// `gpus` in gpupart's order (PCI bus order, as nvidia-smi numbers them). `value` is CUDA_VISIBLE_DEVICES
// (nullopt: not set, every GPU visible in that order); `device_order` is CUDA_DEVICE_ORDER. CUDA numbers
// GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID: for GPUs of one model that is bus order too, for
// a mix of models the ordinals cannot be told, and an ordinal in the list is then a problem.
VisibleGpus resolve_cuda_visible_devices(const std::vector<Gpu>& gpus, std::optional<std::string_view> value,
                                         std::optional<std::string_view> device_order);

}  // namespace gpupart
