// gpupart-dev-multictx: an ordinary CUDA program (it knows nothing about gpupart) with two contexts on
// every GPU it sees (the primary one and one made with cuCtxCreate), launching on each in turn from one
// thread, so the device tests can check that the shim applies each GPU's own mask, per launch, in
// every context.
//
//   gpupart-dev-multictx [--rounds N] [--blocks B] [--pause-after K --resume-file PATH]
//
// stdout, each line flushed:
//   pid <pid> devices <n>
//   device <ordinal> uuid GPU-... sms_total <multiProcessorCount>
//   round <r> device <ordinal> context <primary|created> sms <count> : <sorted distinct SM ids>
//   PAUSED                                   (before round K, with --pause-after K)
// Errors go to stderr as "error <where>: <what>". Exit codes: 0 ok, 1 CUDA or usage error,
// 2 resume file not seen within 30 s, 3 watchdog (the whole run took over 90 s).
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

#include "device_program.cuh"
#include "smid_kernel.cuh"

using gpupart_dev::check;
using gpupart_dev::record_smid;
using gpupart_dev::wait_for_resume;

namespace {

constexpr unsigned kNotWritten = gpupart_dev::kSmidNotWritten;
constexpr unsigned long long kSpinNs = gpupart_dev::kSmidSpinNs;
constexpr unsigned kWatchdogS = 90;
constexpr gpupart_dev::Usage kUsage{
    "usage: gpupart-dev-multictx [--rounds N] [--blocks B] [--pause-after K --resume-file PATH]\n"};

void check_driver(CUresult result, const char* where) {
  if (result != CUDA_SUCCESS) {
    const char* text = nullptr;
    cuGetErrorString(result, &text);
    std::fprintf(stderr, "error %s: %s\n", where, text != nullptr ? text : "unknown driver error");
    std::exit(1);
  }
}

std::string uuid_text(const CUuuid& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    text += hex;
  }
  return text;
}

struct Context {
  int ordinal;
  const char* kind;
  CUcontext context;
  unsigned* ids;  // device memory of this context, one slot per block
};

}  // namespace

int main(int argc, char** argv) {
  gpupart_dev::start_watchdog(kWatchdogS);
  long rounds = 2;
  long blocks = 4224;  // 32 per SM of a 132-SM GPU: several waves on any partition
  long pause_after = -1;
  const char* resume_file = nullptr;
  kUsage.parse(argc, argv,
               {{"--rounds", &rounds, 1, 1000},
                {"--blocks", &blocks, 1, 1L << 20},
                {"--pause-after", &pause_after, 0, 1000},
                {"--resume-file", &resume_file}});
  if ((pause_after >= 0) != (resume_file != nullptr))
    kUsage.error("--pause-after and --resume-file go together");

  check_driver(cuInit(0), "cuInit");
  int count = 0;
  check_driver(cuDeviceGetCount(&count), "cuDeviceGetCount");
  std::printf("pid %ld devices %d\n", static_cast<long>(getpid()), count);
  const auto n = static_cast<size_t>(blocks);
  std::vector<Context> contexts;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device;
    check_driver(cuDeviceGet(&device, ordinal), "cuDeviceGet");
    CUuuid uuid;
    check_driver(cuDeviceGetUuid_v2(&uuid, device), "cuDeviceGetUuid_v2");
    int sms = 0;
    check_driver(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device), "cuDeviceGetAttribute");
    std::printf("device %d uuid %s sms_total %d\n", ordinal, uuid_text(uuid).c_str(), sms);
    CUcontext primary;
    check_driver(cuDevicePrimaryCtxRetain(&primary, device), "cuDevicePrimaryCtxRetain");
    CUcontext created;
    check_driver(cuCtxCreate(&created, nullptr, 0, device), "cuCtxCreate");  // made current by the call
    for (auto [kind, context] : {std::pair<const char*, CUcontext>{"primary", primary}, {"created", created}}) {
      check_driver(cuCtxSetCurrent(context), "cuCtxSetCurrent");
      unsigned* ids = nullptr;
      check(cudaMalloc(&ids, n * sizeof(unsigned)), "cudaMalloc");  // the runtime uses the current context
      contexts.push_back({ordinal, kind, context, ids});
    }
  }
  std::fflush(stdout);

  std::vector<unsigned> ids(n);
  for (long round = 0; round < rounds; ++round) {
    if (round == pause_after) wait_for_resume(resume_file);
    for (const Context& c : contexts) {
      check_driver(cuCtxSetCurrent(c.context), "cuCtxSetCurrent");
      check(cudaMemset(c.ids, 0xff, n * sizeof(unsigned)), "cudaMemset");
      record_smid<<<dim3(static_cast<unsigned>(blocks)), dim3(64)>>>(c.ids, kSpinNs);
      check(cudaGetLastError(), "launch record_smid");
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      check(cudaMemcpy(ids.data(), c.ids, n * sizeof(unsigned), cudaMemcpyDeviceToHost), "cudaMemcpy");
      if (std::find(ids.begin(), ids.end(), kNotWritten) != ids.end()) {
        std::fprintf(stderr, "error round %ld device %d: a block recorded no SM id\n", round, c.ordinal);
        return 1;
      }
      std::sort(ids.begin(), ids.end());
      const auto last = std::unique(ids.begin(), ids.end());
      std::string line = "round " + std::to_string(round) + " device " + std::to_string(c.ordinal) + " context " +
                         c.kind + " sms " + std::to_string(last - ids.begin()) + " :";
      for (auto it = ids.begin(); it != last; ++it) line += " " + std::to_string(*it);
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }
  }
  for (const Context& c : contexts) {
    check_driver(cuCtxSetCurrent(c.context), "cuCtxSetCurrent");
    check(cudaFree(c.ids), "cudaFree");
  }
  return 0;
}
