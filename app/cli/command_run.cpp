// gpupart run --tpcs EXPR -- CMD...: starts CMD with the shim preloaded and its TPC mask.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include <unistd.h>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "model/user_error.hpp"
#include "platform/mps_control.hpp"
#include "registry/registry.hpp"
#include "registry/registry_layout.h"
#include "registry/registry_slot.h"

namespace gpupart::cli {
namespace {

// The shim next to this gpupart: <prefix>/bin/gpupart -> <prefix>/<libdir>/libgpupart-shim.so, or
// build/<preset>/app/gpupart -> build/<preset>/lib/; $GPUPART_SHIM overrides.
std::string find_shim() {
    if (const char* chosen = std::getenv("GPUPART_SHIM"); chosen != nullptr && chosen[0] != '\0') {
        if (!std::filesystem::exists(chosen)) throw UserError(fmt::format("GPUPART_SHIM={}: no such file", chosen));
        return std::filesystem::absolute(chosen).string();
    }
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe");
    for (const char* relative : {"../" GPUPART_INSTALL_LIBDIR "/libgpupart-shim.so", "../lib/libgpupart-shim.so"}) {
        const auto candidate = (exe.parent_path() / relative).lexically_normal();
        if (std::filesystem::exists(candidate)) return candidate.string();
    }
    throw UserError(fmt::format("libgpupart-shim.so not found next to {}; set GPUPART_SHIM to its path", exe.string()));
}

void warn_without_mps(const Registry& registry) {
    int others = 0;
    for (const auto& entry : registry.list())
        if (entry.record && entry.liveness == Liveness::alive) ++others;
    if (others == 0 || mps_status().control_running) return;
    fmt::print(stderr,
               "gpupart: warning: {} other partitioned process{} run{} without MPS: processes time-slice the GPU, so "
               "their partitions do not run side by side (seed 003 R4); start MPS with `gpupart mps start`\n",
               others, others == 1 ? "" : "es", others == 1 ? "s" : "");
}

}  // namespace

Command add_run_command(CLI::App& app) {
    struct Options {
        SnapshotOptions snapshot;
        std::string tpcs;
        std::vector<std::string> command;
    };
    auto options = std::make_shared<Options>();
    CLI::App* run = app.add_subcommand("run", "Start a command confined to some TPCs (it can be moved later with `gpupart set`)");
    run->add_option("--tpcs", options->tpcs, "TPCs the command may use: 0-3,9-16 | gpc2 | 8 tpcs | 25% | all")->required();
    add_snapshot_options(*run, options->snapshot);
    run->add_option("command", options->command, "The command and its arguments (after --)")->required();
    return {run, [options] {
                const ChosenSnapshot topology = partition_topology(options->snapshot);
                const Gpu& gpu = select_gpu(topology, options->snapshot.gpu);
                const ResolvedMask resolved = resolve_mask(options->tpcs, gpu);
                print_partition_notes(resolved);
                const std::string shim = find_shim();
                const Registry registry(Registry::default_directory());
                if (const int error = gpupart_registry_dir_ensure(registry.directory().c_str()); error != 0)
                    throw UserError(fmt::format("registry {}: {}", registry.directory(), std::strerror(-error)));
                warn_without_mps(registry);

                const char* preload = std::getenv("LD_PRELOAD");
                const std::string preload_value = preload != nullptr && preload[0] != '\0' ? shim + ":" + preload : shim;
                ::setenv("LD_PRELOAD", preload_value.c_str(), 1);
                ::setenv(GPUPART_ENV_TPCS, resolved.mask.to_hex().c_str(), 1);
                ::setenv(GPUPART_ENV_REAL_TPCS, real_tpcs(gpu).to_hex().c_str(), 1);
                ::setenv(GPUPART_ENV_REGISTRY_DIR, registry.directory().c_str(), 1);
                // An MPS client gets 2 channels otherwise (seed 000, pitfall 4); keep a user's own choice.
                ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8", 0);

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
