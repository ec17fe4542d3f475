#include "cli_common.hpp"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/user_error.hpp"
#include "model/gpu_queries.hpp"
#include "platform/install_paths.hpp"

namespace gpupart::cli {

std::string json_answer(const nlohmann::ordered_json& answer) {
    return escape_hidden_in_json(answer.dump(2, ' ', false, kJsonUtf8Errors));
}

void add_snapshot_options(CLI::App& command, SnapshotOptions& options) {
    command.add_option("--snapshot", options.snapshot,
                       "Snapshot to read: a JSON file, or builtin:h200 / builtin:gtx1060 / builtin:rtx6000ada "
                       "(default: this machine's GPU where readable, else builtin:h200)");
    command.add_option("--gpu", options.gpu, "GPU: index inside the snapshot, UUID (or a unique prefix) or PCI bus id, "
                                             "as nvidia-smi -i takes them");
}

MachineRoots machine_roots() {
    MachineRoots roots;
    if (const char* sysfs = std::getenv("GPUPART_SYSFS_ROOT"); sysfs && *sysfs) roots.sysfs = sysfs;
    if (const char* dev = std::getenv("GPUPART_DEV_ROOT"); dev && *dev) roots.dev = dev;
    if (const char* proc = std::getenv("GPUPART_PROC_ROOT"); proc && *proc) roots.proc = proc;
    if (const char* nvml = std::getenv("GPUPART_NVML_LIBRARY"); nvml && *nvml) roots.nvml_library = nvml;
    return roots;
}

ChosenSnapshot load_chosen(const SnapshotOptions& options, LiveRead what) {
    return choose_snapshot(options.snapshot, machine_roots(), what);
}

std::vector<Gpu> machine_gpus_for_numbers() {
    try {
        return load_chosen(SnapshotOptions{}, LiveRead::partition).snapshot.gpus;  // the maps: no NVML needed
    } catch (const UserError&) {
        return {};  // masks of GPUs whose map is not known read as descriptor bits ("bits:0x..."), said so where shown
    }
}

void print_origin(const ChosenSnapshot& chosen) {
    fmt::print("snapshot: {} ({}; {} {})\n\n", chosen.origin, chosen.why, chosen.live ? "read" : "captured",
               chosen.snapshot.captured);
}

nlohmann::ordered_json origin_json(const ChosenSnapshot& chosen) {
    return nlohmann::ordered_json{{"snapshot", chosen.origin},
                                  {"live", chosen.live},
                                  {"builtin", chosen.builtin},
                                  {"why", chosen.why},
                                  {"captured", chosen.snapshot.captured}};
}

const std::vector<SourceStatus>& sources_of(const ChosenSnapshot& chosen, int index) {
    static const std::vector<SourceStatus> none;
    if (index < 0 || static_cast<std::size_t>(index) >= chosen.sources.size()) return none;
    return chosen.sources[static_cast<std::size_t>(index)];
}

void require_mask_bits(const ChosenSnapshot& chosen, const SnapshotOptions& options) {
    if (!chosen.live) return;
    // A partition is applied as launch-descriptor bits: without the GPU's map a mask could allow only holes
    // and hang kernels.
    const Gpu& gpu = selected_gpu(chosen, options);
    if (!mask_bits_known(gpu))
        throw UserError(fmt::format("GPU {}'s launch-descriptor bits are not known ({}); or pass --snapshot with a recording of this GPU",
                                    gpu.index, mask_bits_unknown_reason(gpu)));
}

ChosenSnapshot partition_topology(const SnapshotOptions& options, LiveRead what) {
    ChosenSnapshot chosen = load_chosen(options, what);
    require_mask_bits(chosen, options);
    return chosen;
}

int selected_index(const ChosenSnapshot& chosen, const SnapshotOptions& options) {
    return gpu_index(chosen, options.gpu.empty() ? "0" : options.gpu);
}

const Gpu& selected_gpu(const ChosenSnapshot& chosen, const SnapshotOptions& options) {
    return select_gpu(chosen, selected_index(chosen, options));
}

Controller make_controller(const SnapshotOptions& options, int* gpu_index_out, LiveRead what) {
    const ChosenSnapshot topology = partition_topology(options, what);
    const int index = selected_index(topology, options);
    if (gpu_index_out != nullptr) *gpu_index_out = index;
    return Controller(Registry(Registry::default_directory()), select_gpu(topology, index), Journal(Journal::default_path()));
}

Controller make_controller_for_process(const SnapshotOptions& options, int pid) {
    if (!options.gpu.empty()) return make_controller(options, nullptr, LiveRead::partition);
    const ChosenSnapshot topology = partition_topology(options, LiveRead::partition);
    const Registry registry(Registry::default_directory());
    if (topology.snapshot.gpus.size() <= 1)
        return Controller(registry, select_gpu(topology, 0), Journal(Journal::default_path()));
    const std::vector<std::string> on = gpus_of(registry.find_live(pid));
    if (on.size() != 1)
        throw UserError(on.empty() ? fmt::format("process {} has no mask and no context on any GPU yet, and this machine has {}: "
                                                 "name one with --gpu", pid, topology.snapshot.gpus.size())
                                   : fmt::format("process {} is on {} GPUs ({}): name one with --gpu", pid, on.size(),
                                                 fmt::join(on, ", ")));
    for (const Gpu& gpu : topology.snapshot.gpus)
        if (gpu_key(gpu) == on.front()) return Controller(registry, gpu, Journal(Journal::default_path()));
    throw UserError(fmt::format("process {} is on GPU {}, which snapshot {} does not hold: name a GPU with --gpu", pid,
                                on.front(), topology.origin));
}

Controller make_controller_for_gpu_key(const SnapshotOptions& options, const std::string& key) {
    if (!options.gpu.empty() || key.empty()) return make_controller(options, nullptr, LiveRead::partition);
    const ChosenSnapshot topology = partition_topology(options, LiveRead::partition);
    for (const Gpu& gpu : topology.snapshot.gpus)
        if (gpu_key(gpu) == key) return Controller(Registry(Registry::default_directory()), gpu, Journal(Journal::default_path()));
    throw UserError(fmt::format("the change is on GPU {}, which snapshot {} does not hold: name a GPU with --gpu", key,
                                topology.origin));
}

Controller make_rules_controller() {
    return Controller(Registry(Registry::default_directory()), Gpu{}, Journal(Journal::default_path()));
}

// Installed or in a build tree: platform/install_paths.hpp.
std::string find_shim() { return find_shim_library(running_executable()).string(); }

std::string find_probe_program() {
    return find_helper(running_executable(), "gpupart-probe", "GPUPART_PROBE").string();
}

bool no_color_requested() {
    const char* value = std::getenv("NO_COLOR");
    return value != nullptr && *value != '\0';
}

void print_partition_notes(const ResolvedMask& resolved) {
    for (const auto& note : resolved.notes) fmt::print(stderr, "gpupart: {}\n", note);
}

}  // namespace gpupart::cli
