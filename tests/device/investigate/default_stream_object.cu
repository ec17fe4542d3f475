// Investigation (not a regression test): can a program's default streams be confined through the driver's
// per-stream TPC mask, as streams it creates are? The driver keeps a stream object for the legacy and the
// per-thread default stream too, but a program names them by the constants 0, 1 and 2, which point at no
// object. This asks the driver which handle it passes to a host callback enqueued on each, prints the words
// at the mask field of the object behind that handle next to a created stream's, and, with --write, writes a
// mask allowing one TPC into it and reports where the next kernel on that default stream ran.
//   gpupart-dev-default-stream-object [--offset 0x51c] [--tpc K] [--write]
// stdout: "<stream> handle <h> object <p> field <w0> <w1> <w2> <w3> <w4>", then with --write
// "<stream> masked-to-tpc <K> sms <count> min <lowest> max <highest>".
#include <cuda.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "../smid_kernel.cuh"

using gpupart_dev::check;

namespace {

constexpr unsigned kBlocks = 1056;

using AddCallbackFn = CUresult (*)(CUstream, void (*)(CUstream, CUresult, void*), void*, unsigned);
AddCallbackFn g_add_callback = nullptr;
long g_offset = 0x51c;
long g_tpc = 3;
bool g_write = false;

void on_host(CUstream stream, CUresult, void* out) { *static_cast<CUstream*>(out) = stream; }

// The handle the driver passes to a host callback enqueued on `stream`.
CUstream handle_seen(CUstream stream) {
  CUstream seen = reinterpret_cast<CUstream>(0xdeadull);
  if (g_add_callback(stream, on_host, &seen, 0) != CUDA_SUCCESS) {
    std::printf("  cuStreamAddCallback refused\n");
    return nullptr;
  }
  check(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)), "sync");
  return seen;
}

// The object a handle's first word points to, when the handle is an address at all.
uint32_t* field_of(CUstream handle) {
  if (reinterpret_cast<uintptr_t>(handle) < 4096) return nullptr;
  char* object = nullptr;
  std::memcpy(&object, reinterpret_cast<const void*>(handle), sizeof object);
  if (object == nullptr) return nullptr;
  return reinterpret_cast<uint32_t*>(object + g_offset);
}

void where_it_runs(const char* name, cudaStream_t stream, unsigned* out) {
  check(cudaMemsetAsync(out, 0xff, kBlocks * sizeof(unsigned), stream), "memset");
  gpupart_dev::record_smid<<<kBlocks, 32, 0, stream>>>(out, gpupart_dev::kSmidSpinNs);
  check(cudaGetLastError(), "launch");
  std::vector<unsigned> host(kBlocks);
  check(cudaMemcpyAsync(host.data(), out, kBlocks * sizeof(unsigned), cudaMemcpyDeviceToHost, stream), "copy");
  check(cudaStreamSynchronize(stream), "sync");
  std::set<unsigned> sms(host.begin(), host.end());
  sms.erase(gpupart_dev::kSmidNotWritten);
  std::printf("%s masked-to-tpc %ld sms %zu min %u max %u\n", name, g_tpc, sms.size(),
              sms.empty() ? 0 : *sms.begin(), sms.empty() ? 0 : *sms.rbegin());
}

void examine(const char* name, cudaStream_t stream, unsigned* out) {
  where_it_runs(name, stream, out);  // the default stream exists once something ran on it
  CUstream seen = handle_seen(reinterpret_cast<CUstream>(stream));
  uint32_t* field = field_of(seen);
  std::printf("%s handle %p seen %p object %p", name, static_cast<void*>(stream), static_cast<void*>(seen),
              field == nullptr ? nullptr : static_cast<void*>(reinterpret_cast<char*>(field) - g_offset));
  if (field != nullptr)
    std::printf(" field %#x %#x %#x %#x %#x", field[0], field[1], field[2], field[3], field[4]);
  std::printf("\n");
  if (!g_write || field == nullptr) return;
  uint32_t disable[4] = {~0u, ~0u, ~0u, ~0u};
  disable[g_tpc / 32] &= ~(1u << (g_tpc % 32));
  for (int i = 0; i < 4; ++i) field[1 + i] = disable[i];
  __atomic_store_n(&field[0], 1u, __ATOMIC_RELEASE);
  where_it_runs(name, stream, out);
  for (int i = 0; i < 5; ++i) field[i] = 0;
}

}  // namespace

int main(int argc, char** argv) {
  const gpupart_dev::Usage usage{"usage: gpupart-dev-default-stream-object [--offset N] [--tpc K] [--write]\n"};
  usage.parse(argc, argv, {{"--offset", &g_offset, 0, 0x10000}, {"--tpc", &g_tpc, 0, 127}, {"--write", &g_write}});
  cudaDriverEntryPointQueryResult found{};
  check(cudaGetDriverEntryPointByVersion("cuStreamAddCallback", reinterpret_cast<void**>(&g_add_callback),
                                         CUDART_VERSION, cudaEnableDefault, &found),
        "cuStreamAddCallback");
  if (g_add_callback == nullptr) {
    std::fprintf(stderr, "error: no cuStreamAddCallback\n");
    return 1;
  }
  unsigned* out = nullptr;
  check(cudaMalloc(&out, kBlocks * sizeof(unsigned)), "cudaMalloc");
  cudaStream_t created;
  check(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "create");
  examine("created", created, out);
  examine("legacy-null", nullptr, out);
  examine("legacy-constant", cudaStreamLegacy, out);
  examine("per-thread", cudaStreamPerThread, out);
  std::thread other([out] { examine("per-thread-other-thread", cudaStreamPerThread, out); });
  other.join();
  examine("legacy-after", nullptr, out);  // unmasked again after the write was undone
  return 0;
}
