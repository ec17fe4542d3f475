// gpupart-dev-smctrl: a CUDA program that partitions itself through libgpupart.so (the libsmctrl API,
// <gpupart/libsmctrl.h>, issue 22) and records on which SM every block of every launch ran, for the device
// tests to compare with the masks it set: global, per stream, next (used once), the 128-bit _ext forms, a
// launch through cudaLaunchKernelEx, and a stream destroyed and made again. Runs alone or under `gpupart run`.
//
//   gpupart-dev-smctrl [--csv PATH] [--blocks B]
//
// Its TPC sets come from the GPU's GPC map when there is one (libsmctrl_get_gpc_info_ext: `gpupart gpcs
// --write` first): A = the first GPC, B = the second, C = the third, HIGH = the GPC holding the highest TPC
// (above bit 63 on Hopper). Without a map: A = TPCs 0-3, B = 9-12, C = 18-21, HIGH = 63-66.
// stdout, each line flushed:
//   pid <pid> sms_total <n> tpcs <n from libsmctrl_get_tpc_info_cuda> map <yes|no: why>
//   case <name> via <call> stream <s1|s2|s3|null> allowed <TPC list> sms <count> : <sorted distinct SM ids>
// --csv PATH: one row per block: case,call,stream,allowed_tpcs,disable_hex,block,smid.
// Exit codes: 0 ok, 1 a CUDA call or an API call failed (gpupart_last_error on stderr), 3 watchdog (60 s).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

#include <gpupart/libsmctrl.h>

#include "device_program.cuh"
#include "smid_kernel.cuh"

using gpupart_dev::check;
using gpupart_dev::record_smid;

namespace {

constexpr gpupart_dev::Usage kUsage{"usage: gpupart-dev-smctrl [--csv PATH] [--blocks B]\n"};

uint128_t bit(int i) { return static_cast<uint128_t>(1) << i; }

std::string tpc_list(uint128_t allowed) {
  std::string out;
  for (int i = 0; i < 128; ++i) {
    if (!(allowed & bit(i))) continue;
    int end = i;
    while (end + 1 < 128 && (allowed & bit(end + 1))) ++end;
    out += (out.empty() ? "" : ",") + std::to_string(i) + (end > i ? "-" + std::to_string(end) : "");
    i = end;
  }
  return out.empty() ? "none" : out;
}

std::string hex128(uint128_t value) {
  char text[40];
  std::snprintf(text, sizeof text, "0x%016llx%016llx", static_cast<unsigned long long>(value >> 64),
                static_cast<unsigned long long>(value));
  return text;
}

void api_check(const char* call) {
  if (gpupart_last_error()[0] == '\0') return;
  std::fprintf(stderr, "error %s: %s\n", call, gpupart_last_error());
  std::exit(1);
}

struct Recorder {
  FILE* csv = nullptr;
  unsigned* d_ids = nullptr;
  std::vector<unsigned> ids;

  // One launch of record_smid on `stream` (through cudaLaunchKernelEx with `ex`); prints and records
  // where its blocks ran under `allowed`.
  void launch(const char* name, const char* call, const char* stream_name, cudaStream_t stream, uint128_t allowed,
              bool ex = false) {
    const size_t n = ids.size();
    check(cudaMemsetAsync(d_ids, 0xff, n * sizeof(unsigned), stream), "cudaMemsetAsync");
    // Masks set after the memset: a next mask belongs to the kernel, not to the memset's kernel.
    if (std::string(call) == "set_next_mask") libsmctrl_set_next_mask(static_cast<uint64_t>(~allowed));
    if (std::string(call) == "set_next_mask_ext") libsmctrl_set_next_mask_ext(~allowed);
    api_check(call);
    if (ex) {
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(static_cast<unsigned>(n));
      config.blockDim = dim3(64);
      config.stream = stream;
      check(cudaLaunchKernelEx(&config, record_smid, d_ids, gpupart_dev::kSmidSpinNs), "cudaLaunchKernelEx");
    } else {
      record_smid<<<static_cast<unsigned>(n), 64, 0, stream>>>(d_ids, gpupart_dev::kSmidSpinNs);
      check(cudaGetLastError(), "launch record_smid");
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    check(cudaMemcpy(ids.data(), d_ids, n * sizeof(unsigned), cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (size_t b = 0; b < n && csv != nullptr; ++b)
      std::fprintf(csv, "%s,%s,%s,\"%s\",%s,%zu,%u\n", name, call, stream_name, tpc_list(allowed).c_str(),
                   hex128(~allowed).c_str(), b, ids[b]);
    std::vector<unsigned> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::string line = std::string("case ") + name + " via " + call + " stream " + stream_name + " allowed " +
                       tpc_list(allowed) + " sms " + std::to_string(sorted.size()) + " :";
    for (unsigned id : sorted) line += " " + std::to_string(id);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
};

}  // namespace

int main(int argc, char** argv) {
  gpupart_dev::start_watchdog(60);
  const char* csv_path = nullptr;
  long blocks = 0;
  kUsage.parse(argc, argv, {{"--csv", &csv_path}, {"--blocks", &blocks, 1, 1L << 20}});

  int sm_count = 0;
  check(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
  uint32_t tpcs = 0;
  libsmctrl_get_tpc_info_cuda(&tpcs, 0);
  api_check("libsmctrl_get_tpc_info_cuda");

  uint128_t a = 0xfull, b = static_cast<uint128_t>(0xfull) << 9, c = static_cast<uint128_t>(0xfull) << 18,
            high = static_cast<uint128_t>(0xfull) << 63;
  uint32_t gpcs = 0;
  uint128_t* per_gpc = nullptr;
  std::string map = "yes";
  if (libsmctrl_get_gpc_info_ext(&gpcs, &per_gpc, 0) == 0 && gpcs >= 3) {
    a = per_gpc[0];
    b = per_gpc[1];
    c = per_gpc[2];
    for (uint32_t g = 0; g < gpcs; ++g)
      if (per_gpc[g] >> 64 != 0) high = per_gpc[g];
  } else {
    map = std::string("no: ") + gpupart_last_error();
  }
  std::printf("pid %ld sms_total %d tpcs %u map %s\n", static_cast<long>(getpid()), sm_count, tpcs, map.c_str());
  std::fflush(stdout);

  Recorder recorder;
  if (csv_path != nullptr) {
    recorder.csv = std::fopen(csv_path, "w");
    if (recorder.csv == nullptr) {
      std::perror(csv_path);
      return 1;
    }
    std::fprintf(recorder.csv, "case,call,stream,allowed_tpcs,disable_hex,block,smid\n");
  }
  recorder.ids.resize(static_cast<size_t>(blocks > 0 ? blocks : 4L * sm_count));
  check(cudaMalloc(&recorder.d_ids, recorder.ids.size() * sizeof(unsigned)), "cudaMalloc");
  cudaStream_t s1, s2, s3;
  check(cudaStreamCreate(&s1), "cudaStreamCreate");
  check(cudaStreamCreate(&s2), "cudaStreamCreate");
  check(cudaStreamCreate(&s3), "cudaStreamCreate");
  const uint128_t all = ~static_cast<uint128_t>(0);

  recorder.launch("none", "-", "s1", s1, all);
  libsmctrl_set_global_mask(static_cast<uint64_t>(~a));  // a 64-bit mask: bit 63 set stands for 64-127
  api_check("libsmctrl_set_global_mask");
  recorder.launch("global", "set_global_mask", "s1", s1, a);
  recorder.launch("global-default-stream", "set_global_mask", "null", nullptr, a);
  libsmctrl_set_stream_mask(s2, static_cast<uint64_t>(~b));
  api_check("libsmctrl_set_stream_mask");
  recorder.launch("stream", "set_stream_mask", "s2", s2, b);
  recorder.launch("stream-other-stream", "set_global_mask", "s1", s1, a);
  recorder.launch("stream-launchex", "set_stream_mask", "s2", s2, b, true);
  recorder.launch("next", "set_next_mask", "s2", s2, c);
  recorder.launch("next-used-once", "set_stream_mask", "s2", s2, b);
  libsmctrl_set_stream_mask_ext(s3, ~high);
  api_check("libsmctrl_set_stream_mask_ext");
  recorder.launch("stream-ext", "set_stream_mask_ext", "s3", s3, high);
  recorder.launch("next-ext", "set_next_mask_ext", "s1", s1, high | a);
  libsmctrl_set_global_mask_ext(~high);
  api_check("libsmctrl_set_global_mask_ext");
  recorder.launch("global-ext", "set_global_mask_ext", "s1", s1, high);
  // A stream destroyed and made again (often at the same address) starts without the old one's mask.
  check(cudaStreamDestroy(s3), "cudaStreamDestroy");
  check(cudaStreamCreate(&s3), "cudaStreamCreate");
  recorder.launch("stream-made-again", "set_global_mask_ext", "s3", s3, high);

  check(cudaStreamDestroy(s1), "cudaStreamDestroy");
  check(cudaStreamDestroy(s2), "cudaStreamDestroy");
  check(cudaStreamDestroy(s3), "cudaStreamDestroy");
  check(cudaFree(recorder.d_ids), "cudaFree");
  if (recorder.csv != nullptr) std::fclose(recorder.csv);
  return 0;
}
