#include "snapshot/snapshot_choice.hpp"

#include <set>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/gpu_presence.hpp"
#include "snapshot/snapshot_file.hpp"
#include "sources/source_status_text.hpp"

namespace gpupart {

namespace {

// "rmctrl ok" for every distinct source state the GPUs got, in the order first seen.
std::string source_summary(const std::vector<std::vector<SourceStatus>>& sources) {
    std::vector<std::string> parts;
    std::set<std::string> seen;
    for (const auto& gpu : sources)
        for (const auto& status : gpu) {
            std::string part = fmt::format("{} {}", to_string(status.source), to_string(status.state));
            if (seen.insert(part).second) parts.push_back(std::move(part));
        }
    return parts.empty() ? "no live source" : fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

ChosenSnapshot choose_snapshot(const std::optional<std::string>& requested, const MachineRoots& roots) {
    ChosenSnapshot chosen;
    if (requested) {
        chosen.origin = *requested;
        chosen.builtin = requested->starts_with(kBuiltinPrefix);
        chosen.snapshot = load_snapshot(*requested);
        chosen.why = chosen.builtin ? "built-in snapshot named by --snapshot" : "snapshot file named by --snapshot";
        return chosen;
    }
    if (!find_nvidia_gpus(roots.sysfs).empty()) {
        LiveTopology live = read_live_topology(roots);
        chosen.origin = "live";
        chosen.live = true;
        chosen.why = fmt::format("{} NVIDIA GPU{} on this machine, read now ({})", live.snapshot.gpus.size(),
                                 live.snapshot.gpus.size() == 1 ? "" : "s", source_summary(live.sources));
        chosen.snapshot = std::move(live.snapshot);
        chosen.sources = std::move(live.sources);
        return chosen;
    }
    chosen.origin = std::string(kBuiltinPrefix) + std::string(kDefaultBuiltin);
    chosen.builtin = true;
    chosen.snapshot = load_snapshot(chosen.origin);
    chosen.why = "no NVIDIA GPU on this machine: showing the built-in recorded H200";
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
