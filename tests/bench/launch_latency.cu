// gpupart-bench-launch: host-side cost of launching an empty kernel, the number the shim adds
// to. An ordinary CUDA program that knows nothing about gpupart.
//
//   gpupart-bench-launch [--launches N] [--rounds R] [--graph]
//
// Plain: after 1000 warm-up launches, each round times N back-to-back empty<<<1,32>>> launches
// with steady_clock around the launch loop alone, then synchronizes outside that region.
//   round <r> launch_ns <ns per launch, 1 decimal> with_sync_ns <ns per launch incl. the sync>
//   median_launch_ns <median of launch_ns over the rounds>
// --graph: one graph holds 100 captured empty launches; each round replays it N/100 times
// (at least once), so a round runs as many kernels as a plain round. Times are per replay:
//   round <r> replay_ns <ns per graph launch, 1 decimal> with_sync_ns <...>
//   median_replay_ns <...>
// r counts from 0. Errors: "error <where>: <what>" on stderr, exit 1; exit 3: watchdog (120 s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "../device/device_program.cuh"

using gpupart_dev::check;

__global__ void empty() {}

namespace {

constexpr unsigned kWatchdogS = 120;
constexpr long kKernelsPerGraph = 100;
constexpr long kWarmupLaunches = 1000;
constexpr gpupart_dev::Usage kUsage{
    "usage: gpupart-bench-launch [--launches N] [--rounds R] [--graph]\n"};

// `count` launches of one unit: a kernel, or a replay of graph_exec when it is set.
void launch_many(long count, cudaStream_t stream, cudaGraphExec_t graph_exec) {
  if (graph_exec != nullptr) {
    for (long i = 0; i < count; ++i) check(cudaGraphLaunch(graph_exec, stream), "cudaGraphLaunch");
  } else {
    // The launch itself returns nothing; cudaGetLastError after the loop (outside the timed
    // region) reports any launch that failed, since errors are kept until read.
    for (long i = 0; i < count; ++i) empty<<<1, 32, 0, stream>>>();
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2.0;
}

}  // namespace

int main(int argc, char** argv) {
  gpupart_dev::start_watchdog(kWatchdogS);

  long launches = 100000;
  long rounds = 5;
  bool use_graph = false;
  kUsage.parse(argc, argv,
               {{"--graph", &use_graph},
                {"--launches", &launches, 1, 1000000},
                {"--rounds", &rounds, 1, 5000}});

  check(cudaFree(nullptr), "cudaFree(0)");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");

  cudaGraphExec_t graph_exec = nullptr;
  long units = launches;  // what one round launches: kernels, or graph replays
  long warmup = kWarmupLaunches;
  if (use_graph) {
    cudaGraph_t graph;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
    launch_many(kKernelsPerGraph, stream, nullptr);
    check(cudaGetLastError(), "capture empty");
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    check(cudaGraphInstantiate(&graph_exec, graph, 0), "cudaGraphInstantiate");
    check(cudaGraphDestroy(graph), "cudaGraphDestroy");
    units = std::max(1L, launches / kKernelsPerGraph);
    warmup = kWarmupLaunches / kKernelsPerGraph;
  }

  launch_many(warmup, stream, graph_exec);
  check(cudaGetLastError(), "warm-up launch");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize warm-up");

  using Clock = std::chrono::steady_clock;
  const char* what = use_graph ? "replay_ns" : "launch_ns";
  std::vector<double> per_unit;
  for (long r = 0; r < rounds; ++r) {
    const auto t0 = Clock::now();
    launch_many(units, stream, graph_exec);
    const auto t1 = Clock::now();
    check(cudaGetLastError(), "launch empty");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const auto t2 = Clock::now();
    const double n = static_cast<double>(units);
    const double launch_ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
    const double sync_ns = std::chrono::duration<double, std::nano>(t2 - t0).count() / n;
    per_unit.push_back(launch_ns);
    std::printf("round %ld %s %.1f with_sync_ns %.1f\n", r, what, launch_ns, sync_ns);
    std::fflush(stdout);
  }
  std::printf("median_%s %.1f\n", what, median(per_unit));

  if (graph_exec != nullptr) check(cudaGraphExecDestroy(graph_exec), "cudaGraphExecDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}
