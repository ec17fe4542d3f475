// gpupart-bench-work: one process's part in the evidence benchmarks (tests/bench/evidence/README.md). An
// ordinary CUDA program that knows nothing about gpupart: the driver runs it plain, under MPS (with or without
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) or under `gpupart run`.
//
//   gpupart-bench-work victim mm|mem [--seconds S] [--n N] [--bytes B] [--out FILE]
//       units back to back, each waited for; after 0.5 s of warm-up, S seconds (default 2) of per-unit latencies
//       (us, launch to completion seen by the host): "victim n N p50 .. p90 .. p99 .. max .." and FILE (one a line)
//   gpupart-bench-work neighbour mm|mem [--n N] [--bytes B]
//       units back to back until SIGTERM; "running" once the first completed
//   gpupart-bench-work sweep mm|mem [--n N] [--bytes B] [--count C]
//       for each line LABEL on stdin: one unit (it carries a mask changed since the last), then C timed units:
//       "LABEL mean_ms <mean> ms <each>"; the driver changes the mask between lines
//   gpupart-bench-work launcher [--kernel-us U] [--graph]
//       a U-us kernel (default 20), launched and waited for in a loop until SIGTERM, directly or as a one-kernel
//       graph replay: the process a set-to-applied measurement changes
//   gpupart-bench-work launch [--count N] [--out FILE]
//       N (default 20000) launches of a kernel that stamps its start, each waited for: host time in the launch
//       call and launch-to-start (the GPU's global timer minus the host's CLOCK_REALTIME before the call), ns
//   gpupart-bench-work startup --exec-ns T
//       the first kernel of a new process: "startup kernel_start_ns K done_ns D", both after T (the driver's
//       CLOCK_REALTIME just before it started this process)
// mm: n x n bf16 cuBLAS GEMM (default n 4096). mem: a copy of B bytes (default 1 GiB) in each direction.
// Errors: "error <where>: <what>" on stderr, exit 1; exit 3: watchdog (900 s).
#include <csignal>
#include <ctime>
#include <iostream>
#include <string>

#include "work.cuh"

using evidence::check;

namespace {

constexpr unsigned kWatchdogS = 900;
constexpr gpupart_dev::Usage kUsage{
    "usage: gpupart-bench-work victim|neighbour|sweep mm|mem [--seconds S] [--n N] [--bytes B] [--count C] "
    "[--out FILE]\n"
    "       gpupart-bench-work launcher [--kernel-us U] [--graph]\n"
    "       gpupart-bench-work launch [--count N] [--out FILE]\n"
    "       gpupart-bench-work startup --exec-ns T\n"};

volatile std::sig_atomic_t g_stop = 0;
void on_term(int) { g_stop = 1; }

unsigned long long realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<unsigned long long>(ts.tv_sec) * 1000000000ULL + static_cast<unsigned long long>(ts.tv_nsec);
}

cudaStream_t new_stream() {
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return stream;
}

int victim(evidence::Work& work, long seconds, const char* out) {
  const auto now = [] { return std::chrono::steady_clock::now(); };
  for (auto until = now() + std::chrono::milliseconds(500); now() < until;) work.run_once_us();
  std::vector<double> samples;
  for (auto until = now() + std::chrono::seconds(seconds); now() < until && g_stop == 0;)
    samples.push_back(work.run_once_us());
  evidence::report("victim", samples, out);
  return 0;
}

int neighbour(evidence::Work& work) {
  work.run_once_us();
  std::printf("running\n");
  std::fflush(stdout);
  while (g_stop == 0) work.run_once_us();
  return 0;
}

int sweep(evidence::Work& work, long count) {
  std::string label;
  while (std::getline(std::cin, label)) {
    work.run_once_us();  // the launches that adopt a new mask
    std::vector<double> ms;
    double sum = 0;
    for (long i = 0; i < count; ++i) {
      ms.push_back(work.run_once_us() / 1000.0);
      sum += ms.back();
    }
    std::printf("%s mean_ms %.4f ms", label.c_str(), sum / static_cast<double>(count));
    for (double m : ms) std::printf(" %.4f", m);
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}

int launcher(long kernel_us, bool use_graph) {
  cudaStream_t stream = new_stream();
  const auto ns = static_cast<unsigned long long>(kernel_us) * 1000ULL;
  cudaGraphExec_t exec = nullptr;
  if (use_graph) {
    cudaGraph_t graph;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    evidence::spin_ns<<<1, 32, 0, stream>>>(ns);
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  }
  bool first = true;
  while (g_stop == 0) {
    if (exec != nullptr) {
      check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    } else {
      evidence::spin_ns<<<1, 32, 0, stream>>>(ns);
      check(cudaGetLastError(), "launch spin_ns");
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    if (first) {
      std::printf("running\n");
      std::fflush(stdout);
      first = false;
    }
  }
  return 0;
}

int launch(long count, const char* out) {
  cudaStream_t stream = new_stream();
  unsigned long long* stamp = nullptr;
  check(cudaMallocHost(&stamp, sizeof *stamp), "cudaMallocHost");
  std::vector<double> host_ns, start_ns;
  for (long i = -1000; i < count; ++i) {  // the first 1000 warm up and are not kept
    const unsigned long long t0 = realtime_ns();
    evidence::stamp_start<<<1, 32, 0, stream>>>(stamp);
    const unsigned long long t1 = realtime_ns();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    if (i < 0) continue;
    host_ns.push_back(static_cast<double>(t1 - t0));
    start_ns.push_back(static_cast<double>(static_cast<long long>(*stamp - t0)));
  }
  check(cudaGetLastError(), "launch stamp_start");
  if (out != nullptr) {
    FILE* f = std::fopen(out, "w");
    if (f == nullptr) {
      std::fprintf(stderr, "error cannot write %s\n", out);
      return 1;
    }
    for (size_t i = 0; i < host_ns.size(); ++i) std::fprintf(f, "%.0f %.0f\n", host_ns[i], start_ns[i]);
    std::fclose(f);
  }
  evidence::report("launch_host_ns", host_ns, nullptr);
  evidence::report("launch_to_start_ns", start_ns, nullptr);
  return 0;
}

int startup(long exec_ns) {
  unsigned long long* stamp = nullptr;
  check(cudaMallocHost(&stamp, sizeof *stamp), "cudaMallocHost");  // also creates the context
  evidence::stamp_start<<<1, 32>>>(stamp);
  check(cudaGetLastError(), "launch stamp_start");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const unsigned long long done = realtime_ns();
  const auto t = static_cast<long long>(exec_ns);
  std::printf("startup kernel_start_ns %lld done_ns %lld\n", static_cast<long long>(*stamp) - t,
              static_cast<long long>(done) - t);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  gpupart_dev::start_watchdog(kWatchdogS);
  std::signal(SIGTERM, on_term);
  std::signal(SIGINT, on_term);
  if (argc < 2) kUsage.error("no role");
  const std::string role = argv[1];
  const bool with_kind = role == "victim" || role == "neighbour" || role == "sweep";
  if (with_kind && argc < 3) kUsage.error("no kind (mm or mem)");
  const std::string kind = with_kind ? argv[2] : "";
  const int skip = with_kind ? 2 : 1;  // argv[skip] becomes parse()'s argv[0], which it skips

  long seconds = 2, n = 4096, bytes = 1L << 30, count = 10, kernel_us = 20, exec_ns = 0;
  const char* out = nullptr;
  bool graph = false;
  kUsage.parse(argc - skip, argv + skip,
               {{"--seconds", &seconds, 1, 600},
                {"--n", &n, 256, 32768},
                {"--bytes", &bytes, 1L << 20, 1L << 36},
                {"--count", &count, 1, 10000000},
                {"--kernel-us", &kernel_us, 1, 1000000},
                {"--exec-ns", &exec_ns, 1, (1L << 62)},
                {"--graph", &graph},
                {"--out", &out}});

  if (role == "launcher") return launcher(kernel_us, graph);
  if (role == "launch") return launch(count, out);
  if (role == "startup") {
    if (exec_ns == 0) kUsage.error("startup needs --exec-ns");
    return startup(exec_ns);
  }
  if (!with_kind) kUsage.error(argv[1]);
  check(cudaFree(nullptr), "cudaFree(0)");
  cudaStream_t stream = new_stream();
  evidence::Work work(kind, n, bytes, stream);
  if (role == "victim") return victim(work, seconds, out);
  if (role == "neighbour") return neighbour(work);
  return sweep(work, count);
}
