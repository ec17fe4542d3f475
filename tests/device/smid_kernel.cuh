// The kernel of the programs that report where their blocks ran (gpupart-dev-smid, gpupart-dev-multictx),
// apart from device_program.cuh so that the other programs (and the start-time benchmark) do not carry it.
#pragma once

#include "device_program.cuh"

namespace gpupart_dev {

inline constexpr unsigned kSmidNotWritten = 0xffffffffu;       // a slot a block never wrote (memset to 0xff)
inline constexpr unsigned long long kSmidSpinNs = 20000;       // ~20 us per block, so blocks spread over SMs

// Every block writes the id of the SM it runs on after spinning `spin_ns` (so blocks spread over the
// SMs). Thread 0 does the work; the other threads only make the block a realistic size.
__global__ void record_smid(unsigned* out, unsigned long long spin_ns) {
  if (threadIdx.x != 0) return;
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  const unsigned long long t0 = global_timer_ns();
  while (global_timer_ns() - t0 < spin_ns) {
  }
  out[blockIdx.x] = smid;
}

}  // namespace gpupart_dev
