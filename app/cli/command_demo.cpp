// gpupart demo start|stop: simulated partitioned processes (gpupart-demo-worker) on the built-in H200,
// so that list, set, undo, profiles, check (and later the GUI and the terminal view) can be tried on a
// machine with no GPU. They are real processes in the real registry; only their kernels are simulated.
#include <csignal>
#include <cstring>
#include <filesystem>
#include <memory>

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "model/user_error.hpp"
#include "registry/registry.hpp"
#include "snapshot/snapshot_file.hpp"

extern char** environ;

namespace gpupart::cli {
namespace {

struct DemoWorker {
    const char* name;
    const char* tpcs;
    const char* rate;  // launches per second
};
// Three services sharing the H200 GPC-aligned, one changing its load: enough to see every view move.
constexpr DemoWorker kWorkers[] = {
    {"llm-serving", "gpc0-3", "400"},
    {"vision", "gpc4-5", "150"},
    {"batch-train", "gpc6-7", "60"},
};

std::string worker_binary() {
    const auto exe = std::filesystem::read_symlink("/proc/self/exe");
    const auto candidate = exe.parent_path() / "gpupart-demo-worker";
    if (!std::filesystem::exists(candidate)) throw UserError(fmt::format("{} not found next to gpupart", candidate.string()));
    return candidate.string();
}

int start_demo(int workers, int seconds) {
    const Gpu gpu = load_snapshot("builtin:h200").gpus.at(0);
    const std::string binary = worker_binary();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);  // outlives this command, not tied to the terminal
    for (int i = 0; i < workers && i < static_cast<int>(std::size(kWorkers)); ++i) {
        const DemoWorker& worker = kWorkers[i];
        const std::string mask = resolve_mask(worker.tpcs, gpu).mask.to_hex();
        const std::string real = real_tpcs(gpu).to_hex();
        const std::string duration = std::to_string(seconds);
        std::vector<std::string> args = {binary, worker.name, mask, real, duration, worker.rate};
        std::vector<char*> argv;
        for (auto& arg : args) argv.push_back(arg.data());
        argv.push_back(nullptr);
        pid_t pid = 0;
        if (const int error = ::posix_spawn(&pid, binary.c_str(), &actions, &attributes, argv.data(), environ); error != 0)
            throw UserError(fmt::format("cannot start {}: {}", binary, std::strerror(error)));
        fmt::print("started demo worker {} (pid {}) on {} for {} s\n", worker.name, pid, worker.tpcs, seconds);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    fmt::print("simulated workload on the built-in H200: try `gpupart list`, `gpupart set PID gpc1 --snapshot "
               "builtin:h200`, `gpupart check --snapshot builtin:h200`; `gpupart demo stop` ends it\n");
    return 0;
}

int stop_demo() {
    const Registry registry(Registry::default_directory());
    int stopped = 0;
    for (const auto& entry : registry.list())
        if (entry.record && entry.liveness == Liveness::alive && entry.record->shim_version.starts_with("demo") &&
            entry.record->uid == ::getuid() && ::kill(entry.record->pid, SIGTERM) == 0)
            ++stopped;
    fmt::print("stopped {} demo worker{}\n", stopped, stopped == 1 ? "" : "s");
    return 0;
}

}  // namespace

Command add_demo_command(CLI::App& app) {
    struct Options {
        std::string verb;
        int workers = 3;
        int seconds = 3600;
    };
    auto options = std::make_shared<Options>();
    CLI::App* demo = app.add_subcommand("demo", "Simulated partitioned processes on the built-in H200 (no GPU needed)");
    demo->require_subcommand(1);
    CLI::App* start = demo->add_subcommand("start", "Start the simulated workload");
    start->add_option("--workers", options->workers, "How many (1-3)")->check(CLI::Range(1, 3));
    start->add_option("--seconds", options->seconds, "How long they run")->check(CLI::Range(1, 86400));
    start->callback([options] { options->verb = "start"; });
    demo->add_subcommand("stop", "Stop your demo workers")->callback([options] { options->verb = "stop"; });
    return {demo, [options] { return options->verb == "start" ? start_demo(options->workers, options->seconds) : stop_demo(); }};
}

}  // namespace gpupart::cli
