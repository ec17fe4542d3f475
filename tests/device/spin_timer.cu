// gpupart-dev-spin: an ordinary CUDA program (it knows nothing about gpupart) whose kernel is
// exactly one full wave of blocks that each spin for a fixed time. On the whole GPU a run
// takes about --spin-ms; confined to a fraction of the SMs (e.g. under MPS with the shim) the
// same grid needs several waves and takes a multiple of it. The tests judge enforcement by
// that ratio.
//
//   gpupart-dev-spin [--blocks B] [--threads T] [--spin-ms S] [--repeat R]
//
// stdout (after one untimed warm-up run):
//   run <r> blocks <B> elapsed_ms <cudaEvent time, 1 decimal> window_ms <last block end - first
//       block start by %globaltimer, 1 decimal>          (one line per repeat, r counts from 0)
//   pid <pid> done
// Errors go to stderr as "error <where>: <what>"; exit 1. Exit 3: watchdog (over 120 s).
#include <cstdio>

#include <unistd.h>

#include "device_program.cuh"

using gpupart_dev::check;
using gpupart_dev::global_timer_ns;

namespace {

constexpr unsigned kWatchdogS = 120;
constexpr gpupart_dev::Usage kUsage{
    "usage: gpupart-dev-spin [--blocks B] [--threads T] [--spin-ms S] [--repeat R]\n"};

}  // namespace

// window[0]: earliest block start, window[1]: latest block end (ns, %globaltimer).
// Every thread spins, so the whole block stays resident for spin_ns.
__global__ void spin(unsigned long long spin_ns, unsigned long long* window) {
  const unsigned long long t0 = global_timer_ns();
  while (global_timer_ns() - t0 < spin_ns) {
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicMin(&window[0], t0);
    atomicMax(&window[1], global_timer_ns());
  }
}

namespace {

struct Timing {
  float elapsed_ms;
  double window_ms;
};

Timing run_once(unsigned blocks, unsigned threads, unsigned long long spin_ns,
                unsigned long long* d_window, cudaEvent_t start, cudaEvent_t stop) {
  const unsigned long long init[2] = {~0ull, 0ull};
  check(cudaMemcpy(d_window, init, sizeof init, cudaMemcpyHostToDevice), "cudaMemcpy to device");
  check(cudaEventRecord(start), "cudaEventRecord start");
  spin<<<blocks, threads>>>(spin_ns, d_window);
  check(cudaGetLastError(), "launch spin");
  check(cudaEventRecord(stop), "cudaEventRecord stop");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  Timing t{};
  check(cudaEventElapsedTime(&t.elapsed_ms, start, stop), "cudaEventElapsedTime");
  unsigned long long window[2];
  check(cudaMemcpy(window, d_window, sizeof window, cudaMemcpyDeviceToHost),
        "cudaMemcpy to host");
  t.window_ms = static_cast<double>(window[1] - window[0]) / 1e6;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  gpupart_dev::start_watchdog(kWatchdogS);

  long blocks = 0;  // 0: one full wave
  long threads = 256;
  long spin_ms = 150;
  long repeat = 3;
  kUsage.parse(argc, argv,
               {{"--blocks", &blocks, 1, 1L << 22},
                {"--threads", &threads, 1, 1024},
                {"--spin-ms", &spin_ms, 1, 5000},
                {"--repeat", &repeat, 1, 100}});

  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  int sm_count = 0;
  check(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute");
  if (blocks == 0) {
    int per_sm = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spin, static_cast<int>(threads), 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    if (per_sm < 1) kUsage.error("--threads: the kernel does not fit on an SM");
    blocks = static_cast<long>(sm_count) * per_sm;
  }

  const auto nblocks = static_cast<unsigned>(blocks);
  const auto nthreads = static_cast<unsigned>(threads);
  const auto spin_ns = static_cast<unsigned long long>(spin_ms) * 1000000ull;
  unsigned long long* d_window = nullptr;
  check(cudaMalloc(&d_window, 2 * sizeof(unsigned long long)), "cudaMalloc");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");

  run_once(nblocks, nthreads, spin_ns, d_window, start, stop);  // warm-up, not reported
  for (long r = 0; r < repeat; ++r) {
    const Timing t = run_once(nblocks, nthreads, spin_ns, d_window, start, stop);
    std::printf("run %ld blocks %u elapsed_ms %.1f window_ms %.1f\n", r, nblocks,
                static_cast<double>(t.elapsed_ms), t.window_ms);
    std::fflush(stdout);
  }
  std::printf("pid %ld done\n", static_cast<long>(getpid()));
  std::fflush(stdout);

  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  check(cudaFree(d_window), "cudaFree");
  return 0;
}
