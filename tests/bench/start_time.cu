// gpupart-bench-start: the smallest whole CUDA program: create the context, launch one empty
// kernel, wait for it, exit. A script outside times the process start with and without the
// shim. stdout: "start ok". Errors: "error <where>: <what>" on stderr, exit 1.
#include <cstdio>

#include "../device/device_program.cuh"

using gpupart_dev::check;

__global__ void empty() {}

int main() {
  check(cudaFree(nullptr), "cudaFree(0)");  // forces context creation
  empty<<<1, 32>>>();
  check(cudaGetLastError(), "launch empty");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::printf("start ok\n");
  return 0;
}
