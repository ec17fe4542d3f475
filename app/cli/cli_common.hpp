#pragma once
// What every gpupart subcommand shares: the --snapshot/--gpu options and printing the one line
// that says which snapshot is shown and why.
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "controller/controller.hpp"
#include "model/mask_resolve.hpp"
#include "snapshot/snapshot_choice.hpp"

namespace gpupart::cli {

// How every --json answer is dumped (.dump(2, ' ', false, kJsonUtf8Errors)): command lines and file
// names may hold bytes that are not UTF-8, which JSON cannot carry; they become U+FFFD instead of
// failing the whole answer with an internal error. Everything else is kept exact (JSON escapes it).
inline constexpr auto kJsonUtf8Errors = nlohmann::ordered_json::error_handler_t::replace;

// Every --json answer as printed: dumped as above, with C1 controls and bidi formatting characters written
// as \uNNNN escapes (escape_hidden_in_json, the rules one_line follows on a terminal): the same JSON value,
// which a terminal showing it neither acts on nor reorders.
std::string json_answer(const nlohmann::ordered_json& answer);

struct SnapshotOptions {
    std::optional<std::string> snapshot;
    std::string gpu;  // an index, a UUID (or prefix) or a PCI bus id: resolved by gpu_index(); "" = not given (GPU 0)
};

void add_snapshot_options(CLI::App& command, SnapshotOptions& options);
// /sys, /dev, /proc and libnvidia-ml.so.1, or GPUPART_SYSFS_ROOT / GPUPART_DEV_ROOT / GPUPART_PROC_ROOT /
// GPUPART_NVML_LIBRARY where set (tests read constructed machines).
MachineRoots machine_roots();
// The GPUs of this machine (or the built-in recording where it has none), for reading the registry's and
// the history's masks as TPC numbers; none when no topology can be read. Read for a partition: the maps
// and UUIDs are all it needs, so NVML is not started where the RM controls gave them.
std::vector<Gpu> machine_gpus_for_numbers();
// The snapshot --snapshot names, else this machine read live for `what` (sources/live_topology.hpp).
ChosenSnapshot load_chosen(const SnapshotOptions& options, LiveRead what = LiveRead::full);
// "snapshot: builtin:h200 (no NVIDIA GPU on this machine: ...)", printed before human-readable output.
void print_origin(const ChosenSnapshot& chosen);
// The same as the first keys of every --json answer: snapshot, live, builtin, why, captured.
nlohmann::ordered_json origin_json(const ChosenSnapshot& chosen);
// What each source said about GPU `index` (empty for a recording).
const std::vector<SourceStatus>& sources_of(const ChosenSnapshot& chosen, int index);

// The topology a partition is checked against. On a machine with an NVIDIA GPU that is the live model,
// and only once its TPC mask bits are known (the probe gives them); the built-in recording is not this
// GPU (mask-bit holes differ between chips), so it is used there only when named with --snapshot.
// `what`: LiveRead::partition where a command only changes partitions (set, undo, run), which reads no NVML
// where the RM controls gave every GPU's UUID and processes.
ChosenSnapshot partition_topology(const SnapshotOptions& options, LiveRead what = LiveRead::full);
// The check partition_topology makes, on a topology already loaded: the selected GPU's mask bits are known.
void require_mask_bits(const ChosenSnapshot& chosen, const SnapshotOptions& options);

// The controller over this machine's registry, the user's journal and the GPU that --snapshot/--gpu name.
Controller make_controller(const SnapshotOptions& options, int* gpu_index_out = nullptr, LiveRead what = LiveRead::full);
// The same for process `pid`: without --gpu, the GPU it is on when it is on exactly one (or the machine
// has one); refuses in one line when it is on several or on none yet and the machine has several. These
// two read the machine for a partition change (LiveRead::partition): `set` and `undo` wait for no NVML.
Controller make_controller_for_process(const SnapshotOptions& options, int pid);
// The same for the GPU the registry calls `key` (a journal entry's GPU), unless --gpu names one.
Controller make_controller_for_gpu_key(const SnapshotOptions& options, const std::string& key);

// The snapshot index of the GPU --gpu names in `chosen` (snapshot_choice.hpp: index, UUID, PCI bus id).
int selected_index(const ChosenSnapshot& chosen, const SnapshotOptions& options);
const Gpu& selected_gpu(const ChosenSnapshot& chosen, const SnapshotOptions& options);
// A controller for changes that name no TPC (disarming profile rules, undoing an arm or disarm): it reads
// no topology, so they work on a GPU whose mask bits are not probed yet. Plans of TPCs need make_controller.
Controller make_rules_controller();

// libgpupart-shim.so, installed or in the build tree ($GPUPART_SHIM overrides); throws UserError when missing.
std::string find_shim();
// gpupart-probe, installed or in the build tree ($GPUPART_PROBE overrides); throws UserError when missing.
std::string find_probe_program();

// https://no-color.org: NO_COLOR set to anything but "" asks for no colour. gpupart emits colour only in
// `gpupart top` (curses); with NO_COLOR it starts as with -C (attributes only: bold, reverse, dim).
bool no_color_requested();

// What a partitioning command tells the user about its mask on stderr: dropped holes and how a count
// was placed (notes about the topology itself are left to `gpupart mask parse`).
void print_partition_notes(const ResolvedMask& resolved);

}  // namespace gpupart::cli
