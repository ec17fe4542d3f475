#include "platform/demo_workload.hpp"

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <spawn.h>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "model/mask_resolve.hpp"
#include "model/user_error.hpp"
#include "platform/install_paths.hpp"

extern char** environ;

namespace gpupart {

std::vector<DemoWorkerSpec> demo_workers(int count) {
    if (count < 1 || count > kMaxDemoWorkers)
        throw UserError(fmt::format("demo workers: {} is not between 1 and {}", count, kMaxDemoWorkers));
    if (count > 16) {
        // A node packed with small jobs, the scale the views must stay legible at: each worker its own run of
        // the built-in H200's TPC numbers 0-65, none shared (two 16-worker demos lay the same GPCs twice, so
        // every TPC was shared and every tile hatched).
        constexpr int kTpcs = 66;
        const char* services[] = {"llm-serving", "vision", "batch-train", "embeddings"};
        std::vector<DemoWorkerSpec> packed;
        int next = 0;
        for (int i = 0; i < count; ++i) {
            const int n = kTpcs / count + (i < kTpcs % count ? 1 : 0);
            const std::string tpcs = n == 1 ? std::to_string(next) : fmt::format("{}-{}", next, next + n - 1);
            packed.push_back({i < 4 ? services[i] : fmt::format("job-{}", i - 3), tpcs, i < 4 ? 400 / (i + 1) : 20 + 5 * (i % 12)});
            next += n;
        }
        return packed;
    }
    // The first four own whole GPCs (the advice of Bakita & Anderson, RTAS 2023); the rest are small jobs on single TPCs of GPCs
    // a service holds (TPCs 62-65, SMs 124-131, are gpc0's on the built-in H200), sharing them as a busy
    // machine does.
    std::vector<DemoWorkerSpec> all = {
        {"llm-serving", "gpc0-3", 400}, {"vision", "gpc4-5", 150}, {"batch-train", "gpc6", 60}, {"embeddings", "gpc7", 90},
    };
    const char* small_tpcs[] = {"62", "63", "64", "65", "0", "1", "2", "3", "4", "5", "6", "7"};
    for (int i = 4; i < count; ++i)
        all.push_back({fmt::format("job-{}", i - 3), small_tpcs[i - 4], 20 + 5 * (i - 4)});
    all.resize(static_cast<std::size_t>(count));
    return all;
}

std::string demo_worker_binary() {
    return find_helper(running_executable(), "gpupart-demo-worker", "GPUPART_DEMO_WORKER").string();
}

std::vector<StartedWorker> start_demo_workers(const Gpu& gpu, const std::vector<DemoWorkerSpec>& specs, int seconds,
                                              bool exit_with_parent) {
    const std::string binary = demo_worker_binary();
    std::vector<std::string> environment;
    for (char** entry = environ; *entry != nullptr; ++entry)
        if (std::string_view(*entry).rfind("GPUPART_DEMO_GPU=", 0) != 0) environment.emplace_back(*entry);
    environment.emplace_back("GPUPART_DEMO_GPU=" + gpu_key(gpu));  // the GPU the workers are on
    if (exit_with_parent) environment.emplace_back("GPUPART_DEMO_EXIT_WITH_PARENT=1");
    std::vector<char*> envp;
    for (auto& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);  // not tied to the caller's terminal
    std::vector<StartedWorker> started;
    std::string failure;
    // A demo worker stands in for a process under the shim: it is given descriptor bits, as the shim is.
    const std::string real = descriptor_hex(gpu, real_tpcs(gpu));
    // One that chooses its own masks names TPC numbers, as a program does through libgpupart.so, and needs each
    // number's descriptor bit (the GPC map file's bit_of_tpc) to apply them under its operator's bits.
    const TpcNumbering numbering = TpcNumbering::of(gpu);
    std::string tpc_bits;
    for (int number = 0; number < numbering.tpc_count(); ++number)
        tpc_bits += fmt::format("{}{}", number > 0 ? "," : "", *numbering.bit_of(number));
    for (const DemoWorkerSpec& spec : specs) {
        const std::string mask = descriptor_hex(gpu, resolve_mask(spec.tpcs, gpu).mask);
        std::vector<std::string> args = {binary, spec.name, mask, real, std::to_string(seconds),
                                         std::to_string(spec.launches_per_second), spec.scaling};
        if (spec.app_masks) args.insert(args.begin() + 1, {"--app-masks", tpc_bits});
        std::vector<char*> argv;
        for (auto& arg : args) argv.push_back(arg.data());
        argv.push_back(nullptr);
        pid_t pid = 0;
        if (const int error = ::posix_spawn(&pid, binary.c_str(), &actions, &attributes, argv.data(), envp.data()); error != 0) {
            failure = fmt::format("cannot start {}: {}", binary, std::strerror(error));
            break;
        }
        started.push_back({spec, pid});
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (!failure.empty()) throw UserError(failure);
    return started;
}

}  // namespace gpupart
