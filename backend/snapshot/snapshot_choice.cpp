#include "snapshot/snapshot_choice.hpp"

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/gpu_presence.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart {

ChosenSnapshot choose_snapshot(const std::optional<std::string>& requested, const std::string& sysfs_root) {
    ChosenSnapshot chosen;
    if (requested) {
        chosen.origin = *requested;
        chosen.builtin = requested->starts_with(kBuiltinPrefix);
        chosen.snapshot = load_snapshot(*requested);
        chosen.why = chosen.builtin ? "built-in snapshot named by --snapshot" : "snapshot file named by --snapshot";
        return chosen;
    }
    chosen.origin = std::string(kBuiltinPrefix) + std::string(kDefaultBuiltin);
    chosen.builtin = true;
    chosen.snapshot = load_snapshot(chosen.origin);
    const auto gpus = find_nvidia_gpus(sysfs_root);
    if (gpus.empty())
        chosen.why = "no NVIDIA GPU on this machine: showing the built-in recorded H200";
    else
        // Live readers (RM controls, probe, NVML) are not part of this build yet: say so rather than
        // pass the recording off as this machine's GPU.
        chosen.why = fmt::format("{} NVIDIA GPU(s) found (first at {}), but this build has no live topology reader yet: "
                                 "showing the built-in recorded H200, not this machine's GPU",
                                 gpus.size(), gpus.front().bus_id);
    return chosen;
}

const Gpu& select_gpu(const ChosenSnapshot& chosen, int index) {
    const auto& gpus = chosen.snapshot.gpus;
    if (gpus.empty()) throw UserError(fmt::format("snapshot {} holds no GPU", chosen.origin));
    if (index < 0 || index >= static_cast<int>(gpus.size()))
        throw UserError(fmt::format("--gpu {}: snapshot {} has GPU{} 0{}", index, chosen.origin,
                                    gpus.size() == 1 ? "" : "s",
                                    gpus.size() == 1 ? std::string() : fmt::format("-{}", gpus.size() - 1)));
    return gpus[static_cast<std::size_t>(index)];
}

}  // namespace gpupart
