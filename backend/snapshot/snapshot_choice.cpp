#include "snapshot/snapshot_choice.hpp"

#include <cctype>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "model/ascii_text.hpp"
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

ChosenSnapshot choose_snapshot(const std::optional<std::string>& requested, const MachineRoots& roots, LiveRead what) {
    ChosenSnapshot chosen;
    if (requested) {
        chosen.origin = *requested;
        chosen.builtin = requested->starts_with(kBuiltinPrefix);
        chosen.snapshot = load_snapshot(*requested);
        chosen.why = chosen.builtin ? "built-in snapshot named by --snapshot" : "snapshot file named by --snapshot";
        return chosen;
    }
    if (!find_nvidia_gpus(roots.sysfs).empty()) {
        LiveTopology live = read_live_topology(roots, what);
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

namespace gpupart {
namespace {

// "0000:17:00.0" and "17:00.0" name the same bus id; nvidia-smi also writes an 8-digit domain.
std::string bus_without_domain(const std::string& bus) {
    const auto colon = bus.find(':');
    return colon != std::string::npos && bus.find(':', colon + 1) != std::string::npos ? bus.substr(colon + 1) : bus;
}

}  // namespace

int gpu_index(const ChosenSnapshot& chosen, std::string_view spec) {
    const auto& gpus = chosen.snapshot.gpus;
    if (gpus.empty()) throw UserError(fmt::format("snapshot {} holds no GPU", chosen.origin));
    if (spec.empty()) throw UserError("--gpu: empty; give an index, a UUID or a PCI bus id");
    if (spec.find_first_not_of("0123456789") == std::string_view::npos) {
        if (spec.size() > 4) throw UserError(fmt::format("--gpu {}: no such GPU index", one_line(spec)));
        const int index = std::stoi(std::string(spec));
        select_gpu(chosen, index);  // refuses an index out of range, saying which there are
        return index;
    }
    const std::string wanted = ascii_lower(spec);
    std::vector<int> matches;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        const std::string uuid = ascii_lower(gpus[i].uuid.value.value_or(""));
        const std::string bus = ascii_lower(gpus[i].pci_bus_id.value.value_or(""));
        const bool by_uuid = wanted.starts_with("gpu-") && !uuid.empty() && uuid.starts_with(wanted);
        const bool by_bus = !bus.empty() && (wanted == bus || bus_without_domain(wanted) == bus_without_domain(bus));
        if (by_uuid || by_bus) matches.push_back(static_cast<int>(i));
    }
    if (matches.size() == 1) return matches.front();
    std::string known;
    for (const Gpu& gpu : gpus)
        known += fmt::format("{}{} {} {}", known.empty() ? "" : "; ", gpu.index, gpu.uuid.value.value_or("(no UUID)"),
                             gpu.pci_bus_id.value.value_or("(no bus id)"));
    throw UserError(fmt::format("--gpu {}: {} in snapshot {} (GPUs: {})", one_line(spec),
                                matches.empty() ? "names no GPU" : "names several GPUs: give more of the UUID",
                                chosen.origin, known));
}

}  // namespace gpupart
