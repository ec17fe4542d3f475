// gpupart-dev-smctrl: a CUDA program that partitions itself through libgpupart.so (the libsmctrl API,
// <gpupart/libsmctrl.h>) and records on which SM every block of every launch ran, judging each launch
// itself against %smid in libsmctrl's numbering (TPC k = SMs 2k and 2k+1; run it without MPS, which renumbers
// %smid per client): global, per stream, next (used once), the 128-bit _ext forms, a launch through
// cudaLaunchKernelEx, a stream destroyed and made again; then libsmctrl's test suite (each mask type and its
// overrides with TPC 0, 32 and 64 alone must run on SMs 2k and 2k+1 only) and its GPC info test (TPC
// numbers per GPC, disjoint, union 0..N-1; a device the process lacks is ENODEV with zeroed outputs).
// Runs alone or under `gpupart run`.
//
//   gpupart-dev-smctrl [--csv PATH] [--blocks B]
//
// Its TPC sets come from the GPU's GPC map (libsmctrl_get_gpc_info_ext: `gpupart gpcs --write` first; without
// it the masks cannot be translated and the program exits 1): A = the first GPC, B = the second, C = the third,
// HIGH = a GPC holding a TPC above 63 (on Hopper).
// stdout, each line flushed:
//   pid <pid> sms_total <n> tpcs <n from libsmctrl_get_tpc_info_cuda> map yes
//   case <name> via <call> stream <s1|s2|s3|null> allowed <TPC list> sms <count> : <sorted distinct SM ids>
//   verdict <name> <ok | FAIL: why>                     (after every case and every suite check)
//   VERDICT <PASS | FAIL> (<n> checks, <m> failed)
// --csv PATH: one row per block: case,call,stream,allowed_tpcs,disable_hex,block,smid.
// Exit codes: 0 every verdict ok, 4 a verdict failed, 1 a CUDA call or an API call failed (gpupart_last_error
// on stderr), 3 watchdog (120 s).
#include <algorithm>
#include <cstdint>
#include <cerrno>
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

int g_checks = 0, g_failed = 0;

void verdict(const std::string& name, const std::string& failure) {
  ++g_checks;
  g_failed += !failure.empty();
  std::printf("verdict %s %s\n", name.c_str(), failure.empty() ? "ok" : ("FAIL: " + failure).c_str());
  std::fflush(stdout);
}

struct Recorder {
  FILE* csv = nullptr;
  unsigned* d_ids = nullptr;
  std::vector<unsigned> ids;
  std::vector<unsigned> last_sms;  // distinct SM ids of the last launch

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
    last_sms = sorted;
    // TPC k holds SMs 2k and 2k+1: every block must have run on an SM of an allowed TPC.
    std::string outside;
    for (unsigned id : sorted)
      if (id == gpupart_dev::kSmidNotWritten || id / 2 >= 128 || !(allowed & bit(static_cast<int>(id / 2))))
        outside += (outside.empty() ? "" : " ") + (id == gpupart_dev::kSmidNotWritten ? std::string("unwritten") : std::to_string(id));
    verdict(name, outside.empty() ? "" : "blocks on SMs outside the mask: " + outside);
  }
};

enum Partitioning { kGlobal, kStream, kNext, kStreamOverGlobal, kNextOverStream };
const char* const kPartitioningNames[] = {"global", "stream", "next", "stream-over-global", "next-over-stream-and-global"};

// libsmctrl's mask tests: only TPC `tpc` allowed, through the 64-bit calls (wide false) or _ext; the kernel
// must run on SMs 2*tpc and 2*tpc+1 only (and on one of them at least).
void libsmctrl_case(Recorder& recorder, Partitioning type, int tpc, bool wide, cudaStream_t stream) {
  const uint128_t only = bit(tpc), disable = ~only;
  const std::string name = std::string("libsmctrl-") + kPartitioningNames[type] + "-tpc" + std::to_string(tpc) +
                           (wide ? "-ext" : "-64");
  auto global = [&](uint128_t mask, bool w) {
    if (w) libsmctrl_set_global_mask_ext(mask);
    else libsmctrl_set_global_mask(static_cast<uint64_t>(mask));
    api_check("set_global_mask");
  };
  auto on_stream = [&](uint128_t mask, bool w) {
    if (w) libsmctrl_set_stream_mask_ext(stream, mask);
    else libsmctrl_set_stream_mask(stream, static_cast<uint64_t>(mask));
    api_check("set_stream_mask");
  };
  const char* call = "set_global_mask";
  switch (type) {
    case kGlobal: global(disable, wide); break;
    case kStream: on_stream(disable, wide); call = "set_stream_mask"; break;
    case kStreamOverGlobal: global(only, true); on_stream(disable, wide); call = "set_stream_mask"; break;
    case kNextOverStream: global(only, true); on_stream(only, true);  // everything but `tpc`, then the next mask
      [[fallthrough]];
    case kNext: call = wide ? "set_next_mask_ext" : "set_next_mask"; break;
  }
  recorder.launch(name.c_str(), call, "s1", stream, only);
  const auto& sms = recorder.last_sms;
  const bool exact = !sms.empty() && sms.size() <= 2 && sms.front() >= 2u * tpc && sms.back() <= 2u * tpc + 1;
  verdict(name + "-exact", exact ? "" : "expected SMs " + std::to_string(2 * tpc) + "-" + std::to_string(2 * tpc + 1));
  libsmctrl_set_global_mask_ext(0);  // no choice again: every TPC, and a zero stream mask removes the stream's
  libsmctrl_set_stream_mask_ext(stream, 0);
  api_check("reset masks");
}

// libsmctrl's GPC info test, and what a program sees when a call fails: zero outputs.
void gpc_info_case(uint32_t tpcs) {
  uint32_t gpcs = 0;
  uint128_t* masks = nullptr;
  const int error = libsmctrl_get_gpc_info_ext(&gpcs, &masks, 0);
  std::string why;
  if (error != 0) {
    why = std::string("get_gpc_info_ext failed: ") + gpupart_last_error();
  } else {
    uint128_t all = 0;
    for (uint32_t g = 0; g < gpcs; ++g) {
      if (masks[g] == 0 || (all & masks[g]) != 0) why = "a GPC is empty or shares a TPC with another";
      all |= masks[g];
    }
    const uint128_t expected = tpcs >= 128 ? ~static_cast<uint128_t>(0) : bit(static_cast<int>(tpcs)) - 1;
    if (all != expected) why = "the GPCs' TPCs are " + tpc_list(all) + ", not 0-" + std::to_string(tpcs - 1);
    std::printf("gpc-info %u GPCs:", gpcs);
    for (uint32_t g = 0; g < gpcs; ++g) std::printf(" [%s]", tpc_list(masks[g]).c_str());
    std::printf("\n");
  }
  verdict("gpc-info", why);
  uint64_t* masks64 = reinterpret_cast<uint64_t*>(0x1);
  gpcs = 0xdeadbeef;
  const int narrow = libsmctrl_get_gpc_info(&gpcs, &masks64, 0);
  if (tpcs > 64)
    verdict("gpc-info-64-bit", narrow == ERANGE && gpcs == 0 && masks64 == nullptr ? "" : "expected ERANGE with zeroed outputs");
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  for (int dev = count; dev <= count + 1; ++dev) {
    gpcs = 0xdeadbeef;
    masks = reinterpret_cast<uint128_t*>(0x1);
    const int missing = libsmctrl_get_gpc_info_ext(&gpcs, &masks, dev);
    uint32_t n = 0xdeadbeef;
    const int missing_tpcs = libsmctrl_get_tpc_info(&n, dev);
    verdict("gpc-info-missing-device-" + std::to_string(dev),
            missing == ENODEV && gpcs == 0 && masks == nullptr && missing_tpcs == ENODEV && n == 0
                ? "" : "expected ENODEV with zeroed outputs");
  }
}

}  // namespace

int main(int argc, char** argv) {
  gpupart_dev::start_watchdog(120);
  const char* csv_path = nullptr;
  long blocks = 0;
  kUsage.parse(argc, argv, {{"--csv", &csv_path}, {"--blocks", &blocks, 1, 1L << 20}});

  int sm_count = 0;
  check(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
  uint32_t tpcs = 0;
  libsmctrl_get_tpc_info_cuda(&tpcs, 0);
  api_check("libsmctrl_get_tpc_info_cuda");

  uint32_t gpcs = 0;
  uint128_t* per_gpc = nullptr;
  if (libsmctrl_get_gpc_info_ext(&gpcs, &per_gpc, 0) != 0 || gpcs < 3) {
    std::fprintf(stderr, "error gpc-map: %s\n", gpcs < 3 && gpupart_last_error()[0] == '\0' ? "fewer than 3 GPCs" : gpupart_last_error());
    return 1;
  }
  const uint128_t a = per_gpc[0], b = per_gpc[1], c = per_gpc[2];
  uint128_t high = per_gpc[gpcs - 1];
  for (uint32_t g = 0; g < gpcs; ++g)
    if (per_gpc[g] >> 64 != 0) high = per_gpc[g];
  std::printf("pid %ld sms_total %d tpcs %u map yes\n", static_cast<long>(getpid()), sm_count, tpcs);
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
  libsmctrl_set_global_mask(static_cast<uint64_t>(~a));  // a 64-bit mask: TPCs 64-127 stay disabled, as in libsmctrl
  api_check("libsmctrl_set_global_mask");
  recorder.launch("global", "set_global_mask", "s1", s1, a & ~(~static_cast<uint128_t>(0) << 64));
  recorder.launch("global-default-stream", "set_global_mask", "null", nullptr, a & ~(~static_cast<uint128_t>(0) << 64));
  libsmctrl_set_stream_mask(s2, static_cast<uint64_t>(~b));
  api_check("libsmctrl_set_stream_mask");
  recorder.launch("stream", "set_stream_mask", "s2", s2, b);
  recorder.launch("stream-other-stream", "set_global_mask", "s1", s1, a & ~(~static_cast<uint128_t>(0) << 64));
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

  libsmctrl_set_global_mask_ext(0);
  api_check("libsmctrl_set_global_mask_ext");

  // libsmctrl's test suite: every mask type at TPCs 0, 32 and 64 (as its tests walk 32-TPC boundaries).
  for (int type = kGlobal; type <= kNextOverStream; ++type)
    for (int tpc = 0; tpc < static_cast<int>(tpcs) && tpc < 128; tpc += 32) {
      if (tpc < 64) libsmctrl_case(recorder, static_cast<Partitioning>(type), tpc, false, s1);
      libsmctrl_case(recorder, static_cast<Partitioning>(type), tpc, true, s1);
    }
  gpc_info_case(tpcs);

  check(cudaStreamDestroy(s1), "cudaStreamDestroy");
  check(cudaStreamDestroy(s2), "cudaStreamDestroy");
  check(cudaStreamDestroy(s3), "cudaStreamDestroy");
  check(cudaFree(recorder.d_ids), "cudaFree");
  if (recorder.csv != nullptr) std::fclose(recorder.csv);
  std::printf("VERDICT %s (%d checks, %d failed)\n", g_failed == 0 ? "PASS" : "FAIL", g_checks, g_failed);
  return g_failed == 0 ? 0 : 4;
}
