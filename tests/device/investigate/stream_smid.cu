// Investigation (not a regression test): where a kernel runs on a stream the program created (two kinds of
// creation) and on the legacy default stream, as the SMs its blocks report. Run bare and under
// entry_wrap.c to see whether a stream mask written at stream creation confines the first and leaves the
// second alone. An ordinary CUDA program that knows nothing about gpupart.
//   gpupart-dev-stream-smid
// stdout, per stream: "<stream> sms <count> min <lowest> max <highest>"
#include <algorithm>
#include <cstdio>
#include <set>
#include <vector>

#include "../smid_kernel.cuh"

using gpupart_dev::check;

namespace {

constexpr unsigned kBlocks = 1056;  // 8 waves of the H100's/H200's 132 SMs

void report(const char* name, cudaStream_t stream, unsigned* device_out) {
  check(cudaMemsetAsync(device_out, 0xff, kBlocks * sizeof(unsigned), stream), "memset");
  gpupart_dev::record_smid<<<kBlocks, 32, 0, stream>>>(device_out, gpupart_dev::kSmidSpinNs);
  check(cudaGetLastError(), "launch");
  std::vector<unsigned> host(kBlocks);
  check(cudaMemcpyAsync(host.data(), device_out, kBlocks * sizeof(unsigned), cudaMemcpyDeviceToHost, stream), "copy");
  check(cudaStreamSynchronize(stream), "sync");
  std::set<unsigned> sms(host.begin(), host.end());
  sms.erase(gpupart_dev::kSmidNotWritten);
  std::printf("%s sms %zu min %u max %u\n", name, sms.size(), sms.empty() ? 0 : *sms.begin(), sms.empty() ? 0 : *sms.rbegin());
}

}  // namespace

int main() {
  unsigned* out = nullptr;
  check(cudaMalloc(&out, kBlocks * sizeof(unsigned)), "cudaMalloc");
  cudaStream_t created, prioritised;
  check(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  int low = 0, high = 0;
  check(cudaDeviceGetStreamPriorityRange(&low, &high), "priority range");
  check(cudaStreamCreateWithPriority(&prioritised, cudaStreamNonBlocking, high), "cudaStreamCreateWithPriority");
  report("created", created, out);
  report("created-again", created, out);  // entry_wrap's live change lands before this launch (switch at 2)
  report("prioritised", prioritised, out);
  report("legacy-default", nullptr, out);
  report("per-thread-default", cudaStreamPerThread, out);
  return 0;
}
