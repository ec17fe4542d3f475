// gpupart-bench-green: CUDA green contexts, the partitioning one program can do for itself, for the evidence
// benchmarks (tests/bench/evidence/README.md). Green contexts split the SMs among contexts of ONE process; they
// cannot confine another, unmodified process (what gpupart does), so they are the in-process reference.
//
//   gpupart-bench-green pair mm|mem none|mm|mem --victim-sms K [--seconds S] [--n N] [--bytes B] [--out FILE]
//       the victim's work (first kind) in a green context of K SMs, the neighbour's (second kind, or none) in
//       one of the remaining SMs, each in its own thread; prints "green victim_sms A neighbour_sms B" and then
//       the victim's latencies as gpupart-bench-work victim does
//   gpupart-bench-green sweep mm|mem [--n N] [--bytes B] [--count C]
//       every SM count a green context can have on this GPU (as the driver rounds it): "green-sms K mean_ms
//       <mean> ms <each>", after one line with the SM resource's granularity
// Errors: "error <where>: <what>" on stderr, exit 1; exit 3: watchdog (900 s).
#include <cuda.h>

#include <atomic>
#include <string>
#include <thread>

#include "work.cuh"

using evidence::check;

namespace {

constexpr unsigned kWatchdogS = 900;
constexpr gpupart_dev::Usage kUsage{
    "usage: gpupart-bench-green pair mm|mem none|mm|mem --victim-sms K [--seconds S] [--n N] [--bytes B] "
    "[--out FILE]\n"
    "       gpupart-bench-green sweep mm|mem [--n N] [--bytes B] [--count C]\n"};

void check_cu(CUresult result, const char* where) {
  if (result != CUDA_SUCCESS) {
    const char* text = nullptr;
    cuGetErrorString(result, &text);
    std::fprintf(stderr, "error %s: %s\n", where, text != nullptr ? text : "unknown CUresult");
    std::exit(1);
  }
}

// A green context over `sms`, made current on the calling thread, with its own stream.
struct Green {
  CUgreenCtx green = nullptr;
  CUcontext context = nullptr;
  CUstream stream = nullptr;

  Green(CUdevice device, CUdevResource sms) {
    CUdevResourceDesc desc;
    check_cu(cuDevResourceGenerateDesc(&desc, &sms, 1), "cuDevResourceGenerateDesc");
    check_cu(cuGreenCtxCreate(&green, desc, device, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
    check_cu(cuCtxFromGreenCtx(&context, green), "cuCtxFromGreenCtx");
    make_current();
    check_cu(cuGreenCtxStreamCreate(&stream, green, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
  }
  Green(const Green&) = delete;
  Green& operator=(const Green&) = delete;
  ~Green() {
    make_current();
    cuStreamDestroy(stream);
    cuGreenCtxDestroy(green);
  }
  void make_current() const { check_cu(cuCtxSetCurrent(context), "cuCtxSetCurrent"); }
};

// Splits the device's SMs into a group of at least `victim_sms` (as the driver rounds it) and the rest.
void split(CUdevice device, unsigned victim_sms, CUdevResource* group, CUdevResource* rest) {
  CUdevResource all;
  check_cu(cuDeviceGetDevResource(device, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  unsigned groups = 1;
  check_cu(cuDevSmResourceSplitByCount(group, &groups, &all, rest, 0, victim_sms), "cuDevSmResourceSplitByCount");
  if (groups != 1) {
    std::fprintf(stderr, "error split: the driver made %u groups of %u SMs\n", groups, victim_sms);
    std::exit(1);
  }
}

int pair(CUdevice device, const std::string& victim_kind, const std::string& neighbour_kind, long victim_sms,
         long seconds, long n, long bytes, const char* out) {
  CUdevResource group, rest;
  split(device, static_cast<unsigned>(victim_sms), &group, &rest);
  std::printf("green victim_sms %u neighbour_sms %u\n", group.sm.smCount, rest.sm.smCount);
  std::fflush(stdout);
  std::atomic<bool> stop{false}, neighbour_running{neighbour_kind == "none"};
  std::thread neighbour_thread;
  if (neighbour_kind != "none") {
    neighbour_thread = std::thread([&] {
      Green green(device, rest);
      evidence::Work work(neighbour_kind, 8192, 2L << 30, reinterpret_cast<cudaStream_t>(green.stream));
      work.run_once_us();
      neighbour_running = true;
      while (!stop) work.run_once_us();
    });
  }
  while (!neighbour_running) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  {
    Green green(device, group);
    evidence::Work work(victim_kind, n, bytes, reinterpret_cast<cudaStream_t>(green.stream));
    const auto now = [] { return std::chrono::steady_clock::now(); };
    for (auto until = now() + std::chrono::milliseconds(500); now() < until;) work.run_once_us();
    std::vector<double> samples;
    for (auto until = now() + std::chrono::seconds(seconds); now() < until;) samples.push_back(work.run_once_us());
    evidence::report("victim", samples, out);
  }
  stop = true;
  if (neighbour_thread.joinable()) neighbour_thread.join();
  return 0;
}

int sweep(CUdevice device, const std::string& kind, long n, long bytes, long count) {
  CUdevResource all;
  check_cu(cuDeviceGetDevResource(device, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  std::printf("green-resource sms %u min_partition %u coscheduled_alignment %u\n", all.sm.smCount,
              all.sm.minSmPartitionSize, all.sm.smCoscheduledAlignment);
  std::fflush(stdout);
  const unsigned step = std::max(1u, all.sm.smCoscheduledAlignment);
  unsigned last = 0;
  for (unsigned want = std::max(1u, all.sm.minSmPartitionSize); want <= all.sm.smCount; want += step) {
    CUdevResource group, rest;
    split(device, want, &group, &rest);
    if (group.sm.smCount == last) continue;  // the driver rounded to a size already measured
    last = group.sm.smCount;
    Green green(device, group);
    evidence::Work work(kind, n, bytes, reinterpret_cast<cudaStream_t>(green.stream));
    work.run_once_us();
    double sum = 0;
    std::vector<double> ms;
    for (long i = 0; i < count; ++i) {
      ms.push_back(work.run_once_us() / 1000.0);
      sum += ms.back();
    }
    std::printf("green-sms %u mean_ms %.4f ms", group.sm.smCount, sum / static_cast<double>(count));
    for (double m : ms) std::printf(" %.4f", m);
    std::printf("\n");
    std::fflush(stdout);
  }
  // The whole GPU, which a split never yields (it keeps a remainder): the reference point of the curve.
  CUdevResource whole = all;
  Green green(device, whole);
  evidence::Work work(kind, n, bytes, reinterpret_cast<cudaStream_t>(green.stream));
  work.run_once_us();
  double sum = 0;
  for (long i = 0; i < count; ++i) sum += work.run_once_us() / 1000.0;
  std::printf("green-sms %u mean_ms %.4f (whole GPU)\n", all.sm.smCount, sum / static_cast<double>(count));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  gpupart_dev::start_watchdog(kWatchdogS);
  if (argc < 3) kUsage.error("a role and a kind are needed");
  const std::string role = argv[1];
  const std::string kind = argv[2];
  const bool is_pair = role == "pair";
  if (is_pair && argc < 4) kUsage.error("pair needs the neighbour's kind (none, mm or mem)");
  const int skip = is_pair ? 3 : 2;  // argv[skip] becomes parse()'s argv[0], which it skips
  long seconds = 2, n = 4096, bytes = 1L << 30, count = 10, victim_sms = 0;
  const char* out = nullptr;
  kUsage.parse(argc - skip, argv + skip,
               {{"--seconds", &seconds, 1, 600},
                {"--n", &n, 256, 32768},
                {"--bytes", &bytes, 1L << 20, 1L << 36},
                {"--count", &count, 1, 100000},
                {"--victim-sms", &victim_sms, 1, 1024},
                {"--out", &out}});
  check_cu(cuInit(0), "cuInit");
  CUdevice device;
  check_cu(cuDeviceGet(&device, 0), "cuDeviceGet");
  if (is_pair) {
    if (victim_sms == 0) kUsage.error("pair needs --victim-sms");
    return pair(device, kind, argv[3], victim_sms, seconds, n, bytes, out);
  }
  if (role == "sweep") return sweep(device, kind, n, bytes, count);
  kUsage.error(argv[1]);
}
