// What the shim adds to a kernel launch, measured on the CPU where it runs: the fake CUDA driver of
// tests/shim invokes the launch callback exactly as libcuda does, first with no shim loaded, then with
// the real libgpupart-shim.so loaded (same process, same run, so the figures sit side by side).
//   bench_shim_callback [--benchmark_repetitions=5 ...]
// The GPU-side figures (tests/bench/run_bench.sh) include the real driver's own launch cost.
#include <benchmark/benchmark.h>
#include <string>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <dlfcn.h>
#include <unistd.h>

#include "registry/registry.hpp"

namespace {

constexpr const char* kBenchGpu = "GPU-00000000-0000-0000-0000-000000000001";  // the test double's default GPU

using FakeLaunch = int (*)(unsigned, unsigned char*);
FakeLaunch g_launch = nullptr;
std::string g_registry;

void launch_loop(benchmark::State& state) {
    unsigned char descriptor[512];
    for (auto _ : state) {
        g_launch(0x40, descriptor);
        benchmark::DoNotOptimize(descriptor);
    }
}

void BM_Launch_NoShim(benchmark::State& state) { launch_loop(state); }
void BM_Launch_WithShim_SteadyMask(benchmark::State& state) { launch_loop(state); }

// Worst case: the mask changes before every launch, so every launch re-reads the control block.
// Writing the control block (an OFD lock, two fcntl calls) costs far more than the launch, and pausing
// the timer costs about as much, so both loops write and the difference is the refresh's cost.
void control_loop(benchmark::State& state, bool launch) {
    const gpupart::Registry registry(g_registry);
    const auto entries = registry.list();
    if (entries.empty() || !entries[0].record) {
        state.SkipWithError("the shim did not register");
        return;
    }
    gpupart::SlotFile slot = gpupart::SlotFile::open(entries[0].path, true);
    unsigned char descriptor[512];
    bool flip = false;
    for (auto _ : state) {
        slot.write_control(kBenchGpu, true, flip ? gpupart::TpcMask::range(0, 3) : gpupart::TpcMask::range(9, 16),
                           gpupart::TpcMask::range(0, 127));
        flip = !flip;
        if (launch) g_launch(0x40, descriptor);
        benchmark::DoNotOptimize(descriptor);
    }
}
void BM_WithShim_ControlWriteOnly(benchmark::State& state) { control_loop(state, false); }
void BM_WithShim_ControlWriteThenLaunch(benchmark::State& state) { control_loop(state, true); }

// Also from 8 threads at once, as a server with several model instances launches: a cache line every launch
// writes (the slot's counters) shows here as a per-launch cost that grows with the threads.
BENCHMARK(BM_Launch_NoShim)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_Launch_WithShim_SteadyMask)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_WithShim_ControlWriteOnly);
BENCHMARK(BM_WithShim_ControlWriteThenLaunch);

}  // namespace

int main(int argc, char** argv) {
    char registry[] = "/dev/shm/gpupart-bench-XXXXXX";
    if (::mkdtemp(registry) == nullptr) return 1;
    g_registry = registry;
    ::setenv("GPUPART_REGISTRY_DIR", registry, 1);
    // gpc1 of the H200, on the test double's one GPU
    ::setenv("GPUPART_TPCS", (std::string(kBenchGpu) + "=0x1fe00").c_str(), 1);
    ::setenv("GPUPART_REAL_TPCS", (std::string(kBenchGpu) + "=" + gpupart::TpcMask::range(0, 127).to_hex()).c_str(), 1);

    void* driver = ::dlopen(GPUPART_FAKE_LIBCUDA, RTLD_NOW);
    if (driver == nullptr) {
        std::fprintf(stderr, "cannot load the fake driver: %s\n", ::dlerror());
        return 1;
    }
    g_launch = reinterpret_cast<FakeLaunch>(::dlsym(driver, "fake_cuda_launch"));
    benchmark::Initialize(&argc, argv);
    benchmark::ConsoleReporter reporter;  // one reporter for both runs, so they print as one table
    benchmark::RunSpecifiedBenchmarks(&reporter, std::string("NoShim"));
    // The shim's constructor finds libcuda (the fake, by its soname) already loaded and subscribes.
    if (::dlopen(GPUPART_SHIM_PATH, RTLD_NOW) == nullptr) {
        std::fprintf(stderr, "cannot load the shim: %s\n", ::dlerror());
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks(&reporter, std::string("WithShim"));
    benchmark::Shutdown();
    std::filesystem::remove_all(registry);
    return 0;
}
