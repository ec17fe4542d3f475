// Investigation (not a regression test): what each use of the driver's tools-callback table costs a
// program that launches from several threads, to choose how the shim can confine eager launches without
// slowing them. Runs WITHOUT the shim (the table takes one subscriber per process) and is its own
// subscriber, with empty callbacks:
//   none        no subscription
//   subscribed  subscribed, no callback enabled
//   descriptor  the launch-descriptor callback enabled (what the shim uses today)
//   toggled     the descriptor callback enabled, then disabled again before the threads start
//   api-launch  the driver-API callback of cuLaunchKernel only (what following a stream per launch needs)
//   api-stream  the driver-API callbacks of stream creation only (what masking each stream once needs)
// Every thread launches empty<<<1,32>>> on its own non-blocking stream for 600 ms.
//   gpupart-dev-callback-cost THREADS MODE...
// stdout, per mode: mode <m> threads <n> launches_per_s <rate>
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>

namespace {

__global__ void empty() {}

void check(cudaError_t err, const char* where) {
  if (err != cudaSuccess) {
    std::printf("error %s: %s\n", where, cudaGetErrorString(err));
    std::exit(1);
  }
}

// The tools-callback table as the shim finds it (backend/shim/gpupart_shim.c).
const unsigned char kTableId[16] = {0x2c, 0x8e, 0x0a, 0xd8, 0x07, 0x10, 0xab, 0x4e,
                                    0x90, 0xdd, 0x54, 0x71, 0x9f, 0xe5, 0xf7, 0x4b};
using Callback = void (*)(void*, int, int, const void*);
using GetExportTable = int (*)(const void**, const void*);
using Subscribe = int (*)(uint32_t*, Callback, void*);
using Enable = int (*)(uint32_t, uint32_t, int, int);
constexpr int kDomainLaunch = 0xb, kDescriptorUpload = 1, kDomainDriverApi = 6;
constexpr int kCuLaunchKernel = 307, kCuStreamCreate = 124, kCuStreamCreateWithPriority = 367;

std::atomic<long> g_calls{0};
void empty_callback(void*, int, int, const void*) { g_calls.fetch_add(0, std::memory_order_relaxed); }

struct Table {
  Subscribe subscribe = nullptr;
  Enable enable = nullptr;
  uint32_t handle = 0;
  bool subscribed = false;
};

Table table() {
  Table t;
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto get = reinterpret_cast<GetExportTable>(dlsym(libcuda, "cuGetExportTable"));
  const void* entries = nullptr;
  if (get == nullptr || get(&entries, kTableId) != 0 || entries == nullptr) {
    std::printf("error: no callback table\n");
    std::exit(1);
  }
  t.subscribe = reinterpret_cast<Subscribe>(static_cast<void* const*>(entries)[3]);
  t.enable = reinterpret_cast<Enable>(static_cast<void* const*>(entries)[6]);
  return t;
}

double rate(int threads) {
  std::atomic<bool> go{false}, stop{false};
  std::atomic<long> total{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&] {
      cudaStream_t stream;
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
      for (int i = 0; i < 256; ++i) empty<<<1, 32, 0, stream>>>();
      check(cudaStreamSynchronize(stream), "warm-up");
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      long mine = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 64; ++i) empty<<<1, 32, 0, stream>>>();
        mine += 64;
      }
      total.fetch_add(mine);
      check(cudaStreamSynchronize(stream), "sync");
      check(cudaStreamDestroy(stream), "destroy");
    });
  while (ready.load() < threads) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  go = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  stop = true;
  const auto t1 = std::chrono::steady_clock::now();
  for (auto& w : workers) w.join();
  return static_cast<double>(total.load()) / std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::printf("usage: gpupart-dev-callback-cost THREADS MODE...\n");
    return 1;
  }
  const int threads = std::atoi(argv[1]);
  check(cudaFree(nullptr), "cudaFree");
  Table t = table();
  for (int a = 2; a < argc; ++a) {
    const std::string mode = argv[a];
    if (mode != "none" && !t.subscribed) {
      if (t.subscribe(&t.handle, empty_callback, nullptr) != 0) {
        std::printf("error: subscribe refused\n");
        return 1;
      }
      t.subscribed = true;
    }
    int failed = 0;
    if (mode == "descriptor" || mode == "toggled") failed |= t.enable(1, t.handle, kDomainLaunch, kDescriptorUpload);
    if (mode == "toggled") failed |= t.enable(0, t.handle, kDomainLaunch, kDescriptorUpload);
    if (mode == "api-launch") failed |= t.enable(1, t.handle, kDomainDriverApi, kCuLaunchKernel);
    if (mode == "api-stream") {
      failed |= t.enable(1, t.handle, kDomainDriverApi, kCuStreamCreate);
      failed |= t.enable(1, t.handle, kDomainDriverApi, kCuStreamCreateWithPriority);
    }
    if (failed != 0) std::printf("mode %s enable failed\n", mode.c_str());
    std::printf("mode %s threads %d launches_per_s %.0f\n", mode.c_str(), threads, rate(threads));
    std::fflush(stdout);
    // Back to nothing enabled for the next mode.
    t.enable(0, t.handle, kDomainLaunch, kDescriptorUpload);
    t.enable(0, t.handle, kDomainDriverApi, kCuLaunchKernel);
    t.enable(0, t.handle, kDomainDriverApi, kCuStreamCreate);
    t.enable(0, t.handle, kDomainDriverApi, kCuStreamCreateWithPriority);
  }
  return 0;
}
