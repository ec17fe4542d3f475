// A program written against libsmctrl's API (seed 001, Listings 1 and 2), built against gpupart's
// libsmctrl.h and linked with -lgpupart. It partitions itself: a default mask for every kernel, a
// "background" stream and an "urgent" stream on disjoint TPCs, and one launch on a whole GPC. Each
// kernel records the SMs its blocks ran on, so you can see the masks work; `gpupart list --json` (or
// the GUI's process tooltip, or `gpupart top`) shows the same masks from outside while it runs, and an
// operator's `gpupart set` bounds what it may choose (docs/api.md).
//
//   nvcc -std=c++17 libsmctrl_streams.cu -I/usr/include/gpupart -lgpupart -o libsmctrl_streams
//   ./libsmctrl_streams [--hold-seconds S]
//
// Masks are DISABLE masks, as in libsmctrl: a set bit keeps kernels off that TPC. The _ext forms take
// 128 bits, needed on Hopper, whose TPC bits go past 63.
#include <cuda_runtime.h>

#include <libsmctrl.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace {

void check(cudaError_t err, const char* where) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", where, cudaGetErrorString(err));
    std::exit(1);
  }
}

__global__ void record_sm(unsigned* out, unsigned long long spin_ns) {
  if (threadIdx.x != 0) return;
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < spin_ns);
  out[blockIdx.x] = sm;
}

// Launches `blocks` blocks on `stream` and prints the distinct SMs they ran on.
void run_and_show(const char* what, cudaStream_t stream, unsigned* device_out, int blocks) {
  record_sm<<<blocks, 64, 0, stream>>>(device_out, 20000);
  check(cudaGetLastError(), what);
  std::vector<unsigned> sms(static_cast<size_t>(blocks));
  check(cudaMemcpyAsync(sms.data(), device_out, sms.size() * sizeof(unsigned), cudaMemcpyDeviceToHost, stream), what);
  check(cudaStreamSynchronize(stream), what);
  const std::set<unsigned> distinct(sms.begin(), sms.end());
  std::printf("%-34s %3zu SMs:", what, distinct.size());
  for (unsigned sm : distinct) std::printf(" %u", sm);
  std::printf("\n");
}

// A disable mask that allows exactly TPC bits [low, high) of `allowed_bits` (the GPU's real TPC bits
// in order), so the example works on any floorsweep.
uint128_t allow_range(const std::vector<int>& real_bits, size_t low, size_t high) {
  uint128_t disable = ~static_cast<uint128_t>(0);
  for (size_t i = low; i < high && i < real_bits.size(); ++i) disable &= ~(static_cast<uint128_t>(1) << real_bits[i]);
  return disable;
}

}  // namespace

int main(int argc, char** argv) {
  int hold_seconds = 0;
  if (argc == 3 && std::strcmp(argv[1], "--hold-seconds") == 0) hold_seconds = std::atoi(argv[2]);

  uint32_t tpc_count = 0;
  if (libsmctrl_get_tpc_info_cuda(&tpc_count, 0) != 0) {
    std::fprintf(stderr, "TPC count: %s\n", gpupart_last_error());
    return 1;
  }
  // Listing 2: the TPC bits of every GPC (from gpupart's topology: no kernel module needed).
  uint32_t gpc_count = 0;
  uint128_t* gpc_masks = nullptr;
  std::vector<int> real_bits;
  if (libsmctrl_get_gpc_info_ext(&gpc_count, &gpc_masks, 0) != 0) {
    std::fprintf(stderr, "GPC map: %s\n", gpupart_last_error());
    return 1;
  }
  uint128_t all = 0;
  for (uint32_t g = 0; g < gpc_count; ++g) all |= gpc_masks[g];
  for (int bit = 0; bit < 128; ++bit)
    if ((all >> bit) & 1) real_bits.push_back(bit);
  std::printf("%u TPCs in %u GPCs\n", tpc_count, gpc_count);

  unsigned* device_out = nullptr;
  const int blocks = 4 * static_cast<int>(tpc_count);
  check(cudaMalloc(&device_out, sizeof(unsigned) * static_cast<size_t>(blocks)), "cudaMalloc");

  // Listing 1: by default kernels (CUDA's own included) may use the first TPC only.
  libsmctrl_set_global_mask_ext(allow_range(real_bits, 0, 1));
  cudaStream_t background, urgent;
  check(cudaStreamCreate(&background), "cudaStreamCreate");
  check(cudaStreamCreate(&urgent), "cudaStreamCreate");
  const size_t split = real_bits.size() * 3 / 4;
  libsmctrl_set_stream_mask_ext(background, allow_range(real_bits, 0, split));          // three quarters
  libsmctrl_set_stream_mask_ext(urgent, allow_range(real_bits, split, real_bits.size()));  // the rest
  if (const char* error = gpupart_last_error(); error != nullptr && error[0] != '\0')
    std::fprintf(stderr, "a mask was refused: %s\n", error);

  run_and_show("default stream (global mask)", nullptr, device_out, blocks);
  run_and_show("background stream", background, device_out, blocks);
  run_and_show("urgent stream", urgent, device_out, blocks);
  if (gpc_count > 0) {
    libsmctrl_set_next_mask_ext(~gpc_masks[0]);  // the next launch of this thread: GPC 0 only
    run_and_show("next launch: GPC 0 (urgent stream)", urgent, device_out, blocks);
  }
  run_and_show("urgent stream again", urgent, device_out, blocks);

  if (hold_seconds > 0) {  // time to look from outside: gpupart list --json, top, the GUI
    std::printf("holding for %d s (pid %d)\n", hold_seconds, static_cast<int>(getpid()));
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(hold_seconds));
  }
  check(cudaFree(device_out), "cudaFree");
  return 0;
}
