// The cost of one `gpupart exporter` scrape with 100 partitioned processes: 100 real child
// processes registered in a private registry as the shim registers them, on the built-in H200; a scrape
// reads the registry once, gathers the GPU's state, builds every metric and serializes the text
// exposition. Beside it, the registry read alone, so the ratio shows what the metrics add.
//   bench_exporter [--benchmark_repetitions=N]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "controller/system_state.hpp"
#include "metrics/exposition.hpp"
#include "model/gpu_queries.hpp"
#include "registry/registry.hpp"
#include "registry/registry_slot.h"
#include "snapshot/snapshot_file.hpp"

namespace {

constexpr int kProcesses = 100;
std::string g_root;

const gpupart::Gpu& h200() {
    static const gpupart::Snapshot snapshot = gpupart::load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

// A child that registers with one TPC (bit `bit`) on the H200 and waits until its pipe closes (it closes
// its own copy of the write end first, or the pipe would never close).
pid_t start_child(int bit, int hold, int hold_write) {
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    ::close(hold_write);
    gpupart_control_payload initial{};
    gpupart_uuid_parse(gpupart::gpu_key(h200()).c_str(), &initial.gpus[0].uuid);
    initial.gpus[0].flags = GPUPART_CONTROL_HAS_MASK;
    initial.gpus[0].allowed[bit / 32] = 1u << (bit % 32);
    gpupart::mask_to_words(gpupart::real_tpcs(h200()), initial.gpus[0].real_tpcs);
    initial.count = 1;
    initial.generation = 1;
    char dir[512];
    char path[512];
    gpupart_slot_file* slot = nullptr;
    if (gpupart_user_dir(g_root.c_str(), ::getuid(), 1, dir, sizeof dir) != 0 ||
        gpupart_slot_create(dir, ::getpid(), gpupart_process_start_time(::getpid()), ::getuid(),
                            "python3 train.py --rank 7 --config /data/run.yaml", "bench", "", nullptr, &initial, &slot, path, sizeof path) != 0)
        ::_exit(1);
    char byte;
    while (::read(hold, &byte, 1) > 0) {
    }
    ::unlink(path);
    ::_exit(0);
}

void BM_RegistryListOnly(benchmark::State& state) {
    const gpupart::Registry registry(g_root);
    for (auto _ : state) benchmark::DoNotOptimize(registry.list());
}

void BM_Scrape(benchmark::State& state) {
    const gpupart::Registry registry(g_root);
    gpupart::SetLatency latency;
    std::size_t bytes = 0;
    for (auto _ : state) {
        std::vector<gpupart::SystemState> states{gpupart::gather_state(registry.list(), h200())};
        latency.observe(states.back());
        const std::string text = gpupart::exposition_text(gpupart::gpupart_metrics(states, latency, {"bench", 1}));
        bytes = text.size();
        benchmark::DoNotOptimize(text);
        if (states.back().processes.size() != kProcesses) state.SkipWithError("not every process was read");
    }
    state.counters["exposition_bytes"] = static_cast<double>(bytes);
}

BENCHMARK(BM_RegistryListOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scrape)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
    char root[] = "/dev/shm/gpupart-bench-exporter-XXXXXX";
    if (::mkdtemp(root) == nullptr) return 1;
    g_root = root;
    int hold[2];
    if (::pipe(hold) != 0) return 1;
    const auto real = gpupart::real_tpcs(h200()).bits();
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) children.push_back(start_child(real[static_cast<std::size_t>(i) % real.size()], hold[0], hold[1]));
    ::close(hold[0]);
    // Registered once every slot is there.
    for (int tries = 0; tries < 500; ++tries) {
        if (gpupart::Registry(g_root).list().size() == kProcesses) break;
        ::usleep(10000);
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    ::close(hold[1]);
    for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
    std::filesystem::remove_all(g_root);
    return 0;
}
