// gpupart run --tpcs EXPR -- CMD...: starts CMD with the shim preloaded and its TPC mask.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "gpc_maps.hpp"
#include "run_gpu_choice.hpp"
#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "model/mask_resolve.hpp"
#include "model/user_error.hpp"
#include "controller/controller.hpp"
#include "controller/stream_mask_env.hpp"
#include "sources/probe_cache.hpp"
#include "controller/start_plan.hpp"
#include "platform/mps_units.hpp"
#include "registry/registry.hpp"
#include "registry/registry_layout.h"
#include "registry/registry_slot.h"

namespace gpupart::cli {

namespace {

// The GPU with the stream-mask verdict of this machine's probe cache for its UUID and driver, when the
// topology came from a file (`--snapshot`, e.g. an export of this machine): a live read has it already, and
// the cache is per GPU and driver, so a recording of another GPU finds none.
Gpu with_stream_verdict(const Gpu& gpu) {
    Gpu out = gpu;
    if (out.stream_mask_offset.known() || !gpu.uuid.known() || !gpu.driver_version.known()) return out;
    try {
        const CachedProbe cached = load_cached_probe(*gpu.uuid.value, *gpu.driver_version.value);
        if (cached.report && cached.report->stream_mask_offset >= 0)
            out.stream_mask_offset = known_fact(cached.report->stream_mask_offset, Provenance{Source::probe, cached.path});
    } catch (const UserError&) {  // no cache directory (no HOME): no verdict
    }
    return out;
}

// Whether a CUDA program started now joins an MPS daemon: its control endpoint is in the pipe directory (the
// daemon makes it and removes it on quit). One left by a killed daemon reads as "will serve": the variable
// then only costs start time, never confinement.
bool mps_will_serve(const MpsDirectories& mps) {
    struct stat endpoint {};
    return ::lstat((mps.pipe + "/control").c_str(), &endpoint) == 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
    struct RunOptions {
        SnapshotOptions snapshot;
        std::string tpcs;
        std::vector<std::string> command;
        bool spread = false;
        bool dry_run = false;
        bool only = false;
    };
    auto options = std::make_shared<RunOptions>();
    CLI::App* run = app.add_subcommand("run", "Start a command confined to some TPCs (it can be moved later with `gpupart set`)");
    run->add_option("--tpcs", options->tpcs, "TPCs the command may use (TPC k = SMs 2k and 2k+1): 0-31 | 33 | gpc2 | 8 tpcs | 25% | all")->required();
    add_snapshot_options(*run, options->snapshot);
    run->add_flag("--spread", options->spread, "Place a count over as many GPCs as possible (default: GPC-packed)");
    run->add_flag("--dry-run", options->dry_run, "Show the placement and findings; start nothing");
    run->add_flag("--only", options->only, "Let the command see only this GPU (sets CUDA_VISIBLE_DEVICES to its UUID); "
                                           "without it, CUDA_VISIBLE_DEVICES is left as it is and other GPUs the "
                                           "command opens run unconfined");
    run->add_option("command", options->command, "The command and its arguments (after --)")->required();
    return {run, [options] {
                SnapshotOptions snapshot = options->snapshot;
                const ChosenSnapshot topology = run_topology(snapshot, options->only);
                const Gpu& gpu = selected_gpu(topology, snapshot);
                const std::size_t sees = visible_gpu_count(topology, options->only);
                const Registry registry(Registry::default_directory());
                const Controller controller(registry, gpu, Journal(Journal::default_path()));
                // The new process as the controller would see it: counts land on TPCs nobody holds.
                const MaskExpression expression = parse_mask_expression(options->tpcs);
                const auto placed = place_request(gpu, expression, controller.free_for(0),
                                                  options->spread ? Placement::spread : Placement::packed);
                const ResolvedMask resolved = placed ? ResolvedMask{*placed, {}, {}, {}} : resolve_mask(expression, gpu);
                print_partition_notes(resolved);
                PlannedChange start;
                start.command = fmt::format("{}", fmt::join(options->command, " "));
                start.uid = ::getuid();
                start.after = resolved.mask;
                std::vector<Finding> findings = check_change(controller.state(), start);
                for (Finding& finding : plan_start(controller.state(), Newcomer{start.uid, start.command, "", resolved.mask}).findings)
                    findings.push_back(std::move(finding));
                std::erase_if(findings, [](const Finding& f) { return f.id == "no-change"; });
                if (options->dry_run) {
                    fmt::print("would start {} on TPCs {} ({} TPCs, {} SMs)\n", start.command, resolved.mask.to_list(),
                               resolved.mask.count(), sms_of(gpu, resolved.mask).size());
                    for (const Finding& finding : findings) fmt::print("{}\n", finding_line(finding));
                    fmt::print("dry run: nothing started\n");
                    return has_error(findings) ? 1 : 0;
                }
                for (const Finding& finding : findings)
                    if (finding.severity != Severity::info) fmt::print(stderr, "gpupart: {}\n", finding_line(finding));
                if (has_error(findings)) return 1;
                const std::string shim = find_shim();
                // The shim registers in this user's directory; make it now so a problem is said here, once.
                user_directory(registry.directory(), ::getuid(), true);
                write_gpc_maps(topology);  // for a command that partitions itself further (libgpupart.so)

                const char* preload = std::getenv("LD_PRELOAD");
                const std::string preload_value = preload != nullptr && preload[0] != '\0' ? shim + ":" + preload : shim;
                ::setenv("LD_PRELOAD", preload_value.c_str(), 1);
                // The mask is for this GPU only, named by UUID (ordinals change with CUDA_VISIBLE_DEVICES).
                const std::string key = gpu_key(gpu);
                ::setenv(GPUPART_ENV_TPCS, fmt::format("{}={}", key, descriptor_hex(gpu, resolved.mask)).c_str(), 1);
                ::setenv(GPUPART_ENV_REAL_TPCS, fmt::format("{}={}", key, descriptor_hex(gpu, real_tpcs(gpu))).c_str(), 1);
                // Eager launches through the driver's own stream mask where the probe verified it on this GPU
                // and driver (docs/launch-path.md); otherwise none, whatever the caller's environment said.
                const StreamMaskEnv streams = stream_mask_env(with_stream_verdict(gpu));
                if (streams.value) ::setenv(GPUPART_ENV_STREAM_MASK, streams.value->c_str(), 1);
                else ::unsetenv(GPUPART_ENV_STREAM_MASK);
                if (options->only) {
                    ::setenv("CUDA_VISIBLE_DEVICES", key.c_str(), 1);
                } else if (sees > 1) {
                    fmt::print(stderr, "gpupart: confined on GPU {} ({}) only; other GPUs it opens run unconfined "
                               "(--only shows it this GPU alone)\n", gpu.index, key);
                }
                ::setenv(GPUPART_ENV_REGISTRY_DIR, registry.directory().c_str(), 1);
                // The MPS daemon of this GPU's own unit (gpupart-mps@<uuid>.service) where it has one; a
                // directory the user set is kept (platform/mps_units.hpp).
                const MpsDirectories mps = mps_directories(gpu.uuid.value.value_or(""));
                if (!mps.unit.empty()) ::setenv("CUDA_MPS_PIPE_DIRECTORY", mps.pipe.c_str(), 1);
                // An MPS client gets 2 hardware queues unless told otherwise, so its streams would wait on each
                // other; keep a user's own choice. Only where the command will join a daemon: without MPS the
                // variable changes no queue and costs the start tens of milliseconds (docs/launch-path.md).
                if (mps_will_serve(mps)) ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8", 0);

                std::vector<char*> argv;
                for (auto& arg : options->command) argv.push_back(arg.data());
                argv.push_back(nullptr);
                ::execvp(argv[0], argv.data());
                const int error = errno;
                fmt::print(stderr, "gpupart: cannot run {}: {}\n", options->command[0], std::strerror(error));
                return error == ENOENT ? 127 : 126;
            }};
}

}  // namespace gpupart::cli
