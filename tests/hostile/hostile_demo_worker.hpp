#pragma once
// A real registered process whose command line says what the test wants (hostile bytes included): the
// demo worker registers "gpupart-demo-worker NAME (simulated workload, no GPU)" the way the shim does.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "model/tpc_numbering.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart::hostile {

class DemoWorker {
public:
    // Registers in `registry` (made by the worker when missing) on TPCs `tpcs` of the built-in H200.
    DemoWorker(const std::string& registry, const std::string& name, const std::string& tpcs = "gpc0") {
        const Gpu gpu = load_snapshot("builtin:h200").gpus.at(0);
        // The worker registers as the shim does: its arguments are launch-descriptor bits, not TPC numbers.
        const std::string allowed = descriptor_hex(gpu, resolve_mask(tpcs, gpu).mask);
        const std::string real = descriptor_hex(gpu, real_tpcs(gpu));
        pid = ::fork();
        if (pid == 0) {
            ::setenv("GPUPART_REGISTRY_DIR", registry.c_str(), 1);
            ::execl(GPUPART_DEMO_WORKER, GPUPART_DEMO_WORKER, name.c_str(), allowed.c_str(), real.c_str(), "60", "50",
                    static_cast<char*>(nullptr));
            ::_exit(127);
        }
        // Registered once its slot is there (<pid>-<start>.slot, in its user's directory: layout 3).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (std::chrono::steady_clock::now() < deadline) {
            std::error_code ignored;
            for (const auto& file : std::filesystem::recursive_directory_iterator(registry, ignored))
                if (file.path().filename().string().starts_with(std::to_string(pid) + "-")) {
                    slot = file.path().string();
                    return;
                }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        stop();
        throw std::runtime_error("the demo worker did not register in " + registry);
    }
    ~DemoWorker() { stop(); }
    DemoWorker(const DemoWorker&) = delete;
    DemoWorker& operator=(const DemoWorker&) = delete;

    void stop() {
        if (pid <= 0) return;
        ::kill(pid, SIGTERM);
        ::waitpid(pid, nullptr, 0);
        pid = -1;
    }

    pid_t pid = -1;
    std::string slot;  // its slot file
};

}  // namespace gpupart::hostile
