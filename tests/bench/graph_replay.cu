// gpupart-bench-graph: the time of one CUDA graph replay, on the host and end to end, the numbers
// the shim's graph re-masking adds to. graph_bench.sh runs it bare, under the shim with its mask
// unchanged, and under the shim with --flip, where it changes its own registry slot's mask (as
// `gpupart set` would, without the time gpupart set takes) before every other replay, so that half the
// replays are the first after a change: the ones the shim must re-mask.
//
//   gpupart-bench-graph [--nodes K] [--iterations N] [--warmup W] [--interval-us U]
//                       [--flip A_HEX,B_HEX,REAL_HEX]
//
// The graph: K empty<<<1, 32>>> kernels captured in a chain from one stream (default K = 1). Its
// first replay, which uploads it, is timed alone; W more replays warm up (default 100). Then each
// of N iterations (default 2000), U microseconds apart (default 0; a pause lets a run span time, so
// that mask changes made from outside land between iterations), times
//   launch: cudaGraphLaunch alone (the host side, where the shim wraps the launch)
//   e2e:    cudaGraphLaunch and the cudaStreamSynchronize after it (the replay as the program waits)
// stdout (times in ns, whole numbers; pNN: the value below which NN % of the iterations lie):
//   pid <pid> nodes <K> iterations <N> interval_us <U>
//   first launch_ns <t> e2e_ns <t>
//   launch_ns median <t> p90 <t> p99 <t> max <t> mean <t>
//   e2e_ns median <t> p90 <t> p99 <t> max <t> mean <t>
//   slow_e2e <iterations whose e2e took more than twice the median>
//   with --flip, the same two summary lines for the replays right after a change:
//   changed_launch_ns ... / changed_e2e_ns ...  (the lines above are then the replays after those)
//   settle_ns ...: after each change, the wait for the shim's re-mask thread (0 without one), which
//   gpupart set makes too before it returns; the change's write itself is not timed
//   done
// Errors: "error <where>: <what>" on stderr, exit 1; exit 3: watchdog (120 s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <glob.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "../device/device_program.cuh"
#include "registry_layout.h"
#include "registry_slot.h"

using gpupart_dev::check;

__global__ void empty() {}

namespace {

constexpr unsigned kWatchdogS = 120;
constexpr gpupart_dev::Usage kUsage{
    "usage: gpupart-bench-graph [--nodes K] [--iterations N] [--warmup W] [--interval-us U]\n"};

using Clock = std::chrono::steady_clock;

double ns_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}

// Nearest rank: the value at fraction q of the sorted samples.
double quantile(const std::vector<double>& sorted, double q) {
  const auto last = static_cast<double>(sorted.size() - 1);
  return sorted[static_cast<size_t>(q * last + 0.5)];
}

// "<name> median <t> p90 <t> p99 <t> max <t> mean <t>"; returns the median.
double print_summary(const char* name, std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const double mean =
      std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  const double median = quantile(samples, 0.5);
  std::printf("%s median %.0f p90 %.0f p99 %.0f max %.0f mean %.0f\n", name, median,
              quantile(samples, 0.9), quantile(samples, 0.99), samples.back(), mean);
  return median;
}

struct Timing {
  double launch_ns;
  double e2e_ns;
};

Timing replay(cudaGraphExec_t exec, cudaStream_t stream) {
  const auto t0 = Clock::now();
  check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  const auto t1 = Clock::now();
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const auto t2 = Clock::now();
  return {ns_between(t0, t1), ns_between(t0, t2)};
}

// This process's own registry slot (it runs under gpupart run), mapped writable: the process owns it.
gpupart_slot_file* own_slot() {
  const char* dir = std::getenv("GPUPART_REGISTRY_DIR");
  // In its user's directory (registry layout 3 and later): "<root>/u<uid>/<pid>-<start>.slot".
  const std::string pattern = std::string(dir ? dir : "/run/gpupart") + "/u*/" + std::to_string(getpid()) + "-*.slot";
  glob_t found{};
  if (glob(pattern.c_str(), 0, nullptr, &found) != 0 || found.gl_pathc != 1) {
    std::fprintf(stderr, "error --flip: no registry slot %s (run this under gpupart run)\n", pattern.c_str());
    std::exit(1);
  }
  const int fd = open(found.gl_pathv[0], O_RDWR | O_CLOEXEC);
  void* memory = fd < 0 ? MAP_FAILED : mmap(nullptr, GPUPART_SLOT_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  globfree(&found);
  if (memory == MAP_FAILED) {
    std::fprintf(stderr, "error --flip: cannot map %s\n", pattern.c_str());
    std::exit(1);
  }
  return static_cast<gpupart_slot_file*>(memory);
}

// Writes the other of the two masks into the slot's control block, with the next generation: into the
// entry of the one GPU `gpupart run` gave the process a mask for (registry layout 4).
struct Flipper {
  gpupart_slot_file* slot = nullptr;
  uint32_t masks[2][4] = {};
  uint32_t real[4] = {};
  int which = 0;

  void flip() {
    which = 1 - which;
    gpupart_control now{};
    if (gpupart_control_read(&slot->control, &now, 64) != 0 || now.current.count != 1) {
      std::fprintf(stderr, "error --flip: the slot holds no single GPU mask to flip\n");
      std::exit(1);
    }
    gpupart_control_payload c = now.current;
    c.generation += 1;
    c.writer_pid = getpid();
    c.gpus[0].flags = GPUPART_CONTROL_HAS_MASK;
    std::memcpy(c.gpus[0].allowed, masks[which], sizeof c.gpus[0].allowed);
    std::memcpy(c.gpus[0].real_tpcs, real, sizeof c.gpus[0].real_tpcs);
    gpupart_control_write(&slot->control, &c);  // wakes the shim's re-mask thread, as gpupart set does
    generation = c.generation;
  }
  uint64_t generation = 0;

  // What gpupart set does next: wait (at most a second) until the shim's re-mask thread has brought the
  // process's graph execs up to date, if it runs one. Returns how long that took.
  double settle() const {
    const auto start = std::chrono::steady_clock::now();
    if (__atomic_load_n(&slot->counters.graph_remasker, __ATOMIC_ACQUIRE) != 1) return 0.0;
    while (__atomic_load_n(&slot->counters.graph_settled_generation, __ATOMIC_ACQUIRE) < generation &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(1))
      std::this_thread::yield();
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  }
};

}  // namespace

int main(int argc, char** argv) {
  gpupart_dev::start_watchdog(kWatchdogS);

  long nodes = 1;
  long iterations = 2000;
  long warmup = 100;
  long interval_us = 0;
  const char* flip_masks = nullptr;
  kUsage.parse(argc, argv,
               {{"--nodes", &nodes, 1, 10000},
                {"--iterations", &iterations, 1, 1000000},
                {"--warmup", &warmup, 0, 100000},
                {"--interval-us", &interval_us, 0, 1000000},
                {"--flip", &flip_masks}});
  Flipper flipper;
  if (flip_masks != nullptr) {
    std::string text(flip_masks);
    const auto a = text.find(','), b = text.find(',', a == std::string::npos ? a : a + 1);
    if (a == std::string::npos || b == std::string::npos ||
        gpupart_parse_hex_mask(text.substr(0, a).c_str(), flipper.masks[1]) != 0 ||
        gpupart_parse_hex_mask(text.substr(a + 1, b - a - 1).c_str(), flipper.masks[0]) != 0 ||
        gpupart_parse_hex_mask(text.substr(b + 1).c_str(), flipper.real) != 0)
      kUsage.error("--flip takes A_HEX,B_HEX,REAL_HEX");
  }
  std::printf("pid %ld nodes %ld iterations %ld interval_us %ld\n", static_cast<long>(getpid()),
              nodes, iterations, interval_us);
  std::fflush(stdout);

  check(cudaFree(nullptr), "cudaFree(0)");
  if (flip_masks != nullptr) flipper.slot = own_slot();  // the shim registered the process when libcuda loaded
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  cudaGraph_t graph;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  for (long k = 0; k < nodes; ++k) empty<<<1, 32, 0, stream>>>();
  check(cudaGetLastError(), "capture empty");
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec;
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  check(cudaGraphDestroy(graph), "cudaGraphDestroy");

  const Timing first = replay(exec, stream);
  std::printf("first launch_ns %.0f e2e_ns %.0f\n", first.launch_ns, first.e2e_ns);
  for (long i = 0; i < warmup; ++i) replay(exec, stream);

  std::vector<double> launch_ns, e2e_ns, changed_launch_ns, changed_e2e_ns, settle_ns;
  launch_ns.reserve(static_cast<size_t>(iterations));
  e2e_ns.reserve(static_cast<size_t>(iterations));
  for (long i = 0; i < iterations; ++i) {
    if (interval_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(interval_us));
    const bool changed = flipper.slot != nullptr && i % 2 == 0;
    if (changed) {
      flipper.flip();
      settle_ns.push_back(flipper.settle());
    }
    const Timing t = replay(exec, stream);
    (changed ? changed_launch_ns : launch_ns).push_back(t.launch_ns);
    (changed ? changed_e2e_ns : e2e_ns).push_back(t.e2e_ns);
  }

  print_summary("launch_ns", launch_ns);
  const double e2e_median = print_summary("e2e_ns", e2e_ns);
  const auto slow = std::count_if(e2e_ns.begin(), e2e_ns.end(),
                                  [e2e_median](double t) { return t > 2.0 * e2e_median; });
  std::printf("slow_e2e %ld\n", static_cast<long>(slow));
  if (!changed_e2e_ns.empty()) {
    print_summary("changed_launch_ns", changed_launch_ns);
    print_summary("changed_e2e_ns", changed_e2e_ns);
    print_summary("settle_ns", settle_ns);
  }
  std::printf("done\n");
  std::fflush(stdout);

  check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}
