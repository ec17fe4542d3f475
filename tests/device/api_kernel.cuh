// What the libgpupart device programs share (gpupart-dev-exp2, gpupart-dev-smlp): the GPU's real TPC
// bits in GPC-packed order (from libgpupart's GPC map), and Ali et al., ECRTS 2024, Experiment 2's kernel: a fixed
// amount of vector work that can use only so many SMs, each block recording the SM it ran on.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "device_program.cuh"
#include "gpupart/libsmctrl.h"

namespace gpupart_dev {

// Real TPC bits, GPC by GPC (a prefix of this list is a GPC-packed set). Exits 1 with libgpupart's
// message when the GPC map is missing (`gpupart gpcs --write` makes it).
inline std::vector<int> gpc_packed_bits(int device) {
  uint32_t gpcs = 0;
  uint128_t* masks = nullptr;
  if (libsmctrl_get_gpc_info_ext(&gpcs, &masks, device) != 0) {
    std::fprintf(stderr, "error gpc-map: %s\n", gpupart_last_error());
    std::exit(1);
  }
  std::vector<int> bits;
  for (uint32_t g = 0; g < gpcs; ++g)
    for (int bit = 0; bit < 128; ++bit)
      if ((masks[g] >> bit) & 1) bits.push_back(bit);
  return bits;
}

// The DISABLE mask allowing exactly bits[0 .. n-1].
inline uint128_t allow_first(const std::vector<int>& bits, size_t n) {
  uint128_t disable = ~static_cast<uint128_t>(0);
  for (size_t i = 0; i < n && i < bits.size(); ++i) disable &= ~(static_cast<uint128_t>(1) << bits[i]);
  return disable;
}

// Experiment 2's kernel: `iterations` dependent FMAs per thread over blocks of 1024 threads, so its
// length is (waves of blocks) x (one block's time): with B blocks and 2 resident blocks per SM it stops
// getting faster at B/2 SMs. Every block writes its SM id to sm_out[blockIdx.x].
__global__ void vector_work(float* data, unsigned* sm_out, int iterations) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = data[i];
  for (int k = 0; k < iterations; ++k) v = v * 0.999f + 0.5f;
  data[i] = v;
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    sm_out[blockIdx.x] = sm;
  }
}
inline constexpr int kVectorThreads = 1024;

}  // namespace gpupart_dev
