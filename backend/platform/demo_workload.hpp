#pragma once
// The simulated workload of the demo (gpupart demo, the GUI and the terminal view with no GPU): real
// gpupart-demo-worker processes registered in a real registry, following their masks like the shim.
#include <string>
#include <vector>

#include "model/gpu.hpp"

namespace gpupart {

struct DemoWorkerSpec {
    std::string name;  // shown as the command
    std::string tpcs;  // mask expression on the built-in H200
    int launches_per_second = 100;  // on the TPCs of `tpcs`
    // How the rate follows the worker's TPCs (app/demo/demo_worker.cpp): "linear" (proportional),
    // "compute" or "memory" (C(m) = a/m + b of Zahaf et al., RTNS 2021, with a small or a large b).
    std::string scaling = "linear";
    // It also plays a program that chooses its own masks through libgpupart.so (gpupart-demo-worker
    // --app-masks): a global mask and two stream masks in its slot, so the views show them without a GPU.
    bool app_masks = false;
};

// Services sharing the H200 GPC-aligned (and, past the first four, smaller jobs packed into what is
// left), so that every view has something to show. `count` from 1 to 16; 17 to kMaxDemoWorkers: a node
// packed with small jobs, each on TPCs of its own.
inline constexpr int kMaxDemoWorkers = 40;
std::vector<DemoWorkerSpec> demo_workers(int count);

struct StartedWorker {
    DemoWorkerSpec spec;
    int pid = 0;
};

// Starts the workers (gpupart-demo-worker, see demo_worker_binary) for `seconds`, with stdio on
// /dev/null, in their own session. `exit_with_parent`: they end when the caller does (GUI demo).
// The registry they join is $GPUPART_REGISTRY_DIR as set in this process. Throws UserError.
std::vector<StartedWorker> start_demo_workers(const Gpu& gpu, const std::vector<DemoWorkerSpec>& specs, int seconds,
                                              bool exit_with_parent);

// $GPUPART_DEMO_WORKER, else gpupart-demo-worker installed or in the build tree (platform/install_paths.hpp);
// throws UserError when missing.
std::string demo_worker_binary();

}  // namespace gpupart
