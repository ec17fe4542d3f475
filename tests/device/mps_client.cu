// gpupart-dev-mpsclient: an ordinary CUDA program (it knows nothing about gpupart) for the MPS
// fault-domain soak (mps_soak.sh). It keeps the GPU busy with small kernels that read and write a
// 64 MiB buffer and checks their result, so that a SIGKILL lands while work is in flight; or, with
// --fault, it does one good kernel and then writes far outside its allocation, which is a fatal GPU
// error (an illegal address) for its context and, under MPS, for the server it shares.
//
//   gpupart-dev-mpsclient [--seconds S] [--fault]
//
// stdout, each line flushed: "ready <pid>" after the first kernel completed, "done <pid> kernels <n>"
// at the end of a clean run. Errors go to stderr as "error <where>: <what>". Exit codes: 0 ok, 1 CUDA
// error (also a result that does not add up), 3 watchdog (the run took 60 s past --seconds), 4 the
// --fault kernel failed as intended (its error is on stderr).
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

#include "device_program.cuh"

using gpupart_dev::check;

namespace {

constexpr size_t kWords = (64u << 20) / sizeof(unsigned);
constexpr gpupart_dev::Usage kUsage{"usage: gpupart-dev-mpsclient [--seconds S] [--fault]\n"};

}  // namespace

// Adds 1 to every word, a grid-stride loop so that any grid covers the buffer.
__global__ void add_one(unsigned* data, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    data[i] += 1;
}

// Writes 1 TiB past the allocation: no mapping is there, so the GPU raises an illegal-address fault.
__global__ void write_out_of_bounds(unsigned* data) {
  if (threadIdx.x == 0 && blockIdx.x == 0) data[(1ull << 40) / sizeof(unsigned)] = 0xdeadu;
}

int main(int argc, char** argv) {
  long seconds = 2;
  bool fault = false;
  kUsage.parse(argc, argv, {{"--seconds", &seconds, 0, 3600}, {"--fault", &fault}});
  gpupart_dev::start_watchdog(static_cast<unsigned>(seconds) + 60);

  unsigned* data = nullptr;
  check(cudaMalloc(&data, kWords * sizeof(unsigned)), "cudaMalloc");
  check(cudaMemset(data, 0, kWords * sizeof(unsigned)), "cudaMemset");
  long kernels = 0;
  const auto run_kernel = [&] {
    add_one<<<264, 256>>>(data, kWords);
    check(cudaGetLastError(), "launch add_one");
    ++kernels;
  };
  run_kernel();
  check(cudaDeviceSynchronize(), "first kernel");
  std::printf("ready %ld\n", static_cast<long>(getpid()));
  std::fflush(stdout);

  if (fault) {
    write_out_of_bounds<<<1, 32>>>(data);
    const cudaError_t err = cudaDeviceSynchronize();
    std::fprintf(stderr, "error fault kernel: %s\n", cudaGetErrorString(err));
    return err == cudaSuccess ? 1 : 4;
  }

  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 16; ++i) run_kernel();
    check(cudaDeviceSynchronize(), "kernels");
  }
  unsigned first = 0;
  unsigned last = 0;
  check(cudaMemcpy(&first, data, sizeof first, cudaMemcpyDeviceToHost), "cudaMemcpy first");
  check(cudaMemcpy(&last, data + kWords - 1, sizeof last, cudaMemcpyDeviceToHost), "cudaMemcpy last");
  if (first != static_cast<unsigned>(kernels) || last != static_cast<unsigned>(kernels)) {
    std::fprintf(stderr, "error result: %u and %u after %ld kernels\n", first, last, kernels);
    return 1;
  }
  check(cudaFree(data), "cudaFree");
  std::printf("done %ld kernels %ld\n", static_cast<long>(getpid()), kernels);
  std::fflush(stdout);
  return 0;
}
