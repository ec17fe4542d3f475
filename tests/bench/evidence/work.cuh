// The work the evidence benchmarks run (tests/bench/evidence/README.md): a bf16 matrix multiply through
// cuBLAS (the kernel PyTorch's torch.matmul calls), a memory-bound streaming copy, and a timed spin. Shared by
// gpupart-bench-work (one unit of work per process) and gpupart-bench-green (two green contexts in one).
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../device/device_program.cuh"

namespace evidence {

using gpupart_dev::check;

inline void check_blas(cublasStatus_t status, const char* where) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error %s: cuBLAS status %d\n", where, static_cast<int>(status));
    std::exit(1);
  }
}

// Reads and writes every byte of `src`/`dst` once per call: HBM-bound when the buffers are much larger than L2
// (50 MiB on an H100), whatever the number of SMs that run it, once a few dozen SMs issue loads.
__global__ void stream_copy(const float4* __restrict__ src, float4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// Busy for `ns` nanoseconds of the GPU's global timer, in one block: a kernel of known length.
__global__ void spin_ns(unsigned long long ns) {
  const unsigned long long start = gpupart_dev::global_timer_ns();
  while (gpupart_dev::global_timer_ns() - start < ns) {
  }
}

// Writes the global timer when the kernel starts: launch-to-start latency, against the host's realtime clock.
__global__ void stamp_start(unsigned long long* out) {
  if (threadIdx.x == 0) *out = gpupart_dev::global_timer_ns();
}

// One unit of work on one stream: "mm" (C = A x B, n x n bf16, fp32 accumulate) or "mem" (a copy of `bytes`).
class Work {
public:
  Work(const std::string& kind, long n, long bytes, cudaStream_t stream) : kind_(kind), n_(n), stream_(stream) {
    if (kind_ == "mm") {
      const size_t elements = size_t(n) * size_t(n);
      for (void** p : {&a_, &b_, &c_}) check(cudaMalloc(p, elements * sizeof(__nv_bfloat16)), "cudaMalloc matrix");
      check(cudaMemsetAsync(a_, 0x3c, elements * sizeof(__nv_bfloat16), stream_), "memset A");  // ~0.0118
      check(cudaMemsetAsync(b_, 0x3c, elements * sizeof(__nv_bfloat16), stream_), "memset B");
      check_blas(cublasCreate(&blas_), "cublasCreate");
      check_blas(cublasSetStream(blas_, stream_), "cublasSetStream");
    } else if (kind_ == "mem") {
      count_ = size_t(bytes) / sizeof(float4);
      check(cudaMalloc(&a_, count_ * sizeof(float4)), "cudaMalloc src");
      check(cudaMalloc(&c_, count_ * sizeof(float4)), "cudaMalloc dst");
      check(cudaMemsetAsync(a_, 1, count_ * sizeof(float4), stream_), "memset src");
      int device = 0;
      check(cudaGetDevice(&device), "cudaGetDevice");
      check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device), "SM count");
    } else {
      std::fprintf(stderr, "error usage: work kind '%s' is neither mm nor mem\n", kind_.c_str());
      std::exit(1);
    }
    check(cudaStreamSynchronize(stream_), "setup sync");
  }
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;
  ~Work() {
    if (blas_ != nullptr) cublasDestroy(blas_);
    for (void* p : {a_, b_, c_})
      if (p != nullptr) cudaFree(p);
  }

  // Queues one unit; does not wait for it.
  void enqueue() {
    if (kind_ == "mm") {
      const float alpha = 1.0f, beta = 0.0f;
      const int n = static_cast<int>(n_);
      check_blas(cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a_, CUDA_R_16BF, n, b_,
                              CUDA_R_16BF, n, &beta, c_, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
    } else {
      // Eight blocks of 256 threads per SM of the whole GPU: a partition runs them in waves on its own SMs.
      stream_copy<<<sms_ * 8, 256, 0, stream_>>>(static_cast<const float4*>(a_), static_cast<float4*>(c_), count_);
      check(cudaGetLastError(), "launch stream_copy");
    }
  }

  // One unit, waited for: its host-side latency in microseconds (launch to completion seen by the host).
  double run_once_us() {
    const auto t0 = std::chrono::steady_clock::now();
    enqueue();
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }

private:
  std::string kind_;
  long n_ = 0;
  size_t count_ = 0;
  int sms_ = 0;
  cudaStream_t stream_;
  cublasHandle_t blas_ = nullptr;
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* c_ = nullptr;
};

// The q-quantile (0..1) of `v` by nearest rank; v is sorted in place.
inline double quantile(std::vector<double>& v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  return v[i];
}

// Writes `samples` one per line to `path` ("" writes nothing) and prints "<label> n p50 p90 p99 max" on stdout.
inline void report(const char* label, std::vector<double> samples, const char* path) {
  if (path != nullptr && path[0] != '\0') {
    FILE* f = std::fopen(path, "w");
    if (f == nullptr) {
      std::fprintf(stderr, "error cannot write %s: %s\n", path, std::strerror(errno));
      std::exit(1);
    }
    for (double s : samples) std::fprintf(f, "%.3f\n", s);
    std::fclose(f);
  }
  const double p50 = quantile(samples, 0.5), p90 = quantile(samples, 0.9), p99 = quantile(samples, 0.99);
  std::printf("%s n %zu p50 %.3f p90 %.3f p99 %.3f max %.3f\n", label, samples.size(), p50, p90, p99,
              samples.empty() ? 0.0 : samples.back());
  std::fflush(stdout);
}

}  // namespace evidence
