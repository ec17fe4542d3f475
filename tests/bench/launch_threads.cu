// gpupart-bench-threads: empty-kernel launches per second from several host threads at once, as a
// C++ inference server with several model instances in one process launches. An ordinary CUDA program
// that knows nothing about gpupart; a script runs it bare and under the shim, side by side.
//
//   gpupart-bench-threads [--threads N] [--stream own|legacy|per-thread] [--ms DURATION] [--batch K]
//
// Every thread launches empty<<<1,32>>> in batches of K (default 64) for DURATION ms (default 1000)
// after a warm-up, then synchronizes its stream. The streams:
//   own         each thread creates its own non-blocking stream (cudaStreamNonBlocking)
//   legacy      every thread launches on the legacy default stream (stream 0, one per context)
//   per-thread  every thread launches on its per-thread default stream (cudaStreamPerThread)
// Output, one line: threads <N> stream <kind> launches <total> seconds <s> launches_per_s <rate>
// Errors: "error <where>: <what>" on stderr, exit 1; exit 3: watchdog (120 s).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "../device/device_program.cuh"

using gpupart_dev::check;

__global__ void empty() {}

namespace {

constexpr unsigned kWatchdogS = 120;
constexpr gpupart_dev::Usage kUsage{
    "usage: gpupart-bench-threads [--threads N] [--stream own|legacy|per-thread] [--ms DURATION] [--batch K]\n"};

enum class StreamKind { own, legacy, per_thread };

struct Shared {
  StreamKind kind = StreamKind::own;
  long batch = 64;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  std::atomic<long> launches{0};
};

void launcher(Shared& shared) {
  cudaStream_t stream = nullptr;
  if (shared.kind == StreamKind::own) check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  if (shared.kind == StreamKind::per_thread) stream = cudaStreamPerThread;
  for (int i = 0; i < 256; ++i) empty<<<1, 32, 0, stream>>>();  // warm-up: this thread's first launches
  check(cudaGetLastError(), "warm-up launch");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize warm-up");
  shared.ready.fetch_add(1);
  while (!shared.go.load(std::memory_order_acquire)) std::this_thread::yield();
  long mine = 0;
  while (!shared.stop.load(std::memory_order_relaxed)) {
    for (long i = 0; i < shared.batch; ++i) empty<<<1, 32, 0, stream>>>();
    mine += shared.batch;
  }
  shared.launches.fetch_add(mine);
  check(cudaGetLastError(), "launch empty");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  if (shared.kind == StreamKind::own) check(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

}  // namespace

int main(int argc, char** argv) {
  gpupart_dev::start_watchdog(kWatchdogS);
  long threads = 1;
  long duration_ms = 1000;
  long batch = 64;
  const char* kind_text = "own";
  kUsage.parse(argc, argv,
               {{"--threads", &threads, 1, 256},
                {"--ms", &duration_ms, 10, 60000},
                {"--batch", &batch, 1, 100000},
                {"--stream", &kind_text}});
  Shared shared;
  shared.batch = batch;
  if (std::strcmp(kind_text, "own") == 0) {
    shared.kind = StreamKind::own;
  } else if (std::strcmp(kind_text, "legacy") == 0) {
    shared.kind = StreamKind::legacy;
  } else if (std::strcmp(kind_text, "per-thread") == 0) {
    shared.kind = StreamKind::per_thread;
  } else {
    kUsage.error("--stream takes own, legacy or per-thread");
  }

  check(cudaFree(nullptr), "cudaFree(0)");  // the context exists before any thread launches
  std::vector<std::thread> workers;
  for (long t = 0; t < threads; ++t) workers.emplace_back(launcher, std::ref(shared));
  while (shared.ready.load() < threads) std::this_thread::yield();
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  shared.go.store(true, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::milliseconds(duration_ms));
  shared.stop.store(true);
  const auto t1 = Clock::now();  // launches after this are the last batches in flight, counted below
  for (std::thread& worker : workers) worker.join();
  const double seconds = std::chrono::duration<double>(t1 - t0).count();
  const long total = shared.launches.load();
  std::printf("threads %ld stream %s launches %ld seconds %.3f launches_per_s %.0f\n", threads, kind_text, total, seconds,
              static_cast<double>(total) / seconds);
  return 0;
}
