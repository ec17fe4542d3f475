// gpupart set PID EXPR: changes the TPCs of a running partitioned process, from its next kernel launch.
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "registry/registry.hpp"

namespace gpupart::cli {

Command add_set_command(CLI::App& app) {
    struct Options {
        SnapshotOptions snapshot;
        int pid = 0;
        std::string tpcs;
    };
    auto options = std::make_shared<Options>();
    CLI::App* set = app.add_subcommand("set", "Change the TPCs of a running partitioned process");
    set->add_option("PID", options->pid, "Process id (see `gpupart list`)")->required();
    set->add_option("EXPR", options->tpcs, "TPCs it may use from its next launch: 0-3,9-16 | gpc2 | 8 tpcs | all")->required();
    add_snapshot_options(*set, options->snapshot);
    return {set, [options] {
                const ChosenSnapshot topology = partition_topology(options->snapshot);
                const Gpu& gpu = select_gpu(topology, options->snapshot.gpu);
                // Everything is checked before anything is written: the mask, then the process and permission.
                const ResolvedMask resolved = resolve_mask(options->tpcs, gpu);
                const Registry registry(Registry::default_directory());
                const SlotRecord before = registry.find_live(options->pid);
                const SlotRecord after = registry.set_mask(options->pid, true, resolved.mask, real_tpcs(gpu));
                print_partition_notes(resolved);
                const std::string old_mask = before.control && before.control->has_mask ? before.control->allowed.to_list() : "all";
                fmt::print("process {} ({}): TPCs {} -> {} ({} TPCs, {} SMs), generation {}; applies from its next kernel "
                           "launch (kernels in CUDA graphs already uploaded keep their mask)\n",
                           options->pid, before.command.substr(0, 60), old_mask, resolved.mask.to_list(), resolved.mask.count(),
                           sms_of(gpu, resolved.mask).size(), after.control ? after.control->generation : 0);
                return 0;
            }};
}

}  // namespace gpupart::cli
