// gpupart demo start|stop: simulated partitioned processes (gpupart-demo-worker) on the built-in H200,
// so that list, set, undo, profiles, check (and later the GUI and the terminal view) can be tried on a
// machine with no GPU. They are real processes in the real registry; only their kernels are simulated.
#include <chrono>
#include <csignal>
#include <memory>
#include <set>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "model/pid.hpp"
#include "platform/demo_workload.hpp"
#include "model/user_error.hpp"
#include "registry/registry.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart::cli {
namespace {

// Every worker either appears in the registry or has said (on stderr) why it could not register; a
// worker that did not register is stopped and the command fails, never "started" with exit 0.
void await_registration(const Registry& registry, const std::vector<StartedWorker>& started) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
        std::set<int> seen;
        for (const auto& entry : registry.list())
            if (entry.record) seen.insert(entry.record->pid);
        std::vector<const StartedWorker*> missing;
        for (const auto& worker : started)
            if (!seen.contains(worker.pid)) missing.push_back(&worker);
        if (missing.empty()) return;
        bool any_alive = false;
        // The workers are our children: one that exited is reaped here and is not alive.
        for (const auto* worker : missing) any_alive = any_alive || ::waitpid(worker->pid, nullptr, WNOHANG) == 0;
        if (!any_alive || std::chrono::steady_clock::now() > deadline) {
            for (const auto& worker : started) ::kill(worker.pid, SIGTERM);
            throw UserError(fmt::format("demo worker {} (pid {}) did not register in {}; every worker was stopped",
                                        missing.front()->spec.name, missing.front()->pid, registry.directory()));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

int start_demo(int workers, int seconds, const std::vector<std::string>& scaling, bool app_masks) {
    const Gpu gpu = load_snapshot("builtin:h200").gpus.at(0);
    const Registry registry(Registry::default_directory());
    user_directory(registry.directory(), ::getuid(), true);  // an unsafe registry is refused here, in one line
    std::vector<DemoWorkerSpec> specs = demo_workers(workers);
    if (scaling.size() > specs.size())
        throw UserError(fmt::format("--scaling names {} kinds for {} workers: give at most one per worker", scaling.size(), specs.size()));
    for (std::size_t i = 0; i < scaling.size(); ++i) specs[i].scaling = scaling[i];
    specs.front().app_masks = app_masks;
    const auto started = start_demo_workers(gpu, specs, seconds, false);
    await_registration(registry, started);
    for (const StartedWorker& worker : started)
        fmt::print("started demo worker {} (pid {}) on {} for {} s{}{}\n", worker.spec.name, worker.pid, worker.spec.tpcs, seconds,
                   worker.spec.scaling == "linear" ? "" : fmt::format(", {}-bound", worker.spec.scaling),
                   worker.spec.app_masks ? ", choosing its own masks (libgpupart)" : "");
    fmt::print("simulated workload on the built-in H200: try `gpupart list`, `gpupart set PID gpc1 --snapshot "
               "builtin:h200`, `gpupart check --snapshot builtin:h200`; `gpupart demo stop` ends it\n");
    return 0;
}

int stop_demo() {
    const Registry registry(Registry::default_directory());
    int stopped = 0;
    for (const auto& entry : registry.list())
        if (entry.record && entry.liveness == Liveness::alive && entry.record->shim_version.starts_with("demo") &&
            entry.record->uid == ::getuid() && !pid_problem(entry.record->pid) &&  // kill(0 or -1) hits a group
            ::kill(entry.record->pid, SIGTERM) == 0)
            ++stopped;
    fmt::print("stopped {} demo worker{}\n", stopped, stopped == 1 ? "" : "s");
    return 0;
}

}  // namespace

Command add_demo_command(CLI::App& app) {
    struct DemoOptions {
        std::string verb;
        int workers = 3;
        int seconds = 3600;
        std::vector<std::string> scaling;
        bool app_masks = false;
    };
    auto options = std::make_shared<DemoOptions>();
    CLI::App* demo = app.add_subcommand("demo", "Simulated partitioned processes on the built-in H200 (no GPU needed)");
    demo->require_subcommand(1);
    CLI::App* start = demo->add_subcommand("start", "Start the simulated workload");
    start->add_option("--workers", options->workers,
                      "How many (1-40; past 16 each gets its own few TPCs, as on a node packed with small jobs)")
        ->check(CLI::Range(1, kMaxDemoWorkers));
    start->add_option("--seconds", options->seconds, "How long they run")->check(CLI::Range(1, 86400));
    start->add_option("--scaling", options->scaling,
                      "How each worker's simulated rate follows its TPCs, in worker order: linear (default), compute or "
                      "memory (C(m) = a/m + b of Zahaf et al., RTNS 2021, with a small or a large b; for `gpupart measure`)")
        ->delimiter(',')
        ->check(CLI::IsMember({"linear", "compute", "memory"}));
    start->add_flag("--app-masks", options->app_masks,
                    "The first worker also plays a program that chooses its own masks through libgpupart.so (a global "
                    "mask and two stream masks, one outside its partition), shown by list, top and the app");
    start->callback([options] { options->verb = "start"; });
    demo->add_subcommand("stop", "Stop your demo workers")->callback([options] { options->verb = "stop"; });
    return {demo, [options] { return options->verb == "start" ? start_demo(options->workers, options->seconds, options->scaling, options->app_masks) : stop_demo(); }};
}

}  // namespace gpupart::cli
