// gpupart-dev-smlp: one process of an SMLP component (Ali et al., ECRTS 2024, section 3) on a real GPU. Each request
// locks TPCs through gpupart_smlp_lock (sized by the L list of Experiment 2), runs Experiment 2's kernel
// on exactly the granted TPCs (libsmctrl_set_next_mask_ext), waits for it, and unlocks.
//
//   gpupart-dev-smlp --component NAME --levels FILE [--create --h H --fq M] [--priority P]
//                    [--requests N] [--gap-us G] [--label L] [--blocks B] [--iterations I]
//                    [--start-file PATH]
//
// --levels FILE is gpupart-dev-exp2's CSV (median_us per TPC count): L[k] = median at (k+1)*h TPCs.
// --create makes the component from every real TPC of device 0 with its GPC map (h, M as given); every
// process of the component passes the same --h (its L list has one entry per h TPCs).
// stdout, one line per request (CSV, header first):
//   request,ticket,tpcs,allowed_hex,issued_ns,granted_ns,done_ns,sms
// issued/granted/done are CLOCK_REALTIME, so lines of several processes share one time axis.
// --start-file PATH: once CUDA and the component are ready, print PAUSED and wait for PATH to exist, so that
// several workers start their requests together (CUDA's start-up takes longer than a whole run).
#include <time.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "api_kernel.cuh"
#include "gpupart/smlp.h"

using namespace gpupart_dev;

namespace {

const Usage kUsage{
    "usage: gpupart-dev-smlp --component NAME --levels FILE [--create --h H --fq M] [--priority P]\n"
    "                        [--requests N] [--gap-us G] [--label L] [--blocks B] [--iterations I]\n"
    "                        [--start-file PATH]\n"};

uint64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

// Experiment 2's medians, by TPC count.
std::vector<double> read_medians(const char* path) {
  std::vector<double> by_count(1, 0.0);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    size_t tpcs = 0;
    double median = 0;
    char comma = 0;
    if (!(fields >> tpcs >> comma >> median) || tpcs != by_count.size()) kUsage.error("--levels: not gpupart-dev-exp2's CSV");
    by_count.push_back(median);
  }
  if (by_count.size() < 2) kUsage.error("--levels: empty");
  return by_count;
}

void fail(const char* where, int error) {
  std::fprintf(stderr, "error %s: %s (%d)\n", where, gpupart_smlp_last_error(), error);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  start_watchdog(300);
  const char* component = nullptr;
  const char* levels_file = nullptr;
  const char* label = "worker";
  const char* start_file = nullptr;
  bool create = false;
  long h = 1, fq = 2, priority = 1, requests = 20, gap_us = 0, blocks = 32, iterations = 200000;
  kUsage.parse(argc, argv,
               {{"--component", &component}, {"--levels", &levels_file}, {"--create", &create}, {"--h", &h, 1, 128},
                {"--fq", &fq, 1, 64}, {"--priority", &priority, 1, 99}, {"--requests", &requests, 1, 100000},
                {"--gap-us", &gap_us, 0, 10000000}, {"--label", &label}, {"--blocks", &blocks, 1, 65536},
                {"--iterations", &iterations, 1, 100000000}, {"--start-file", &start_file}});
  if (component == nullptr || levels_file == nullptr) kUsage.error("--component and --levels are required");
  const std::vector<double> medians = read_medians(levels_file);
  const std::vector<int> bits = gpc_packed_bits(0);

  gpupart_smlp_config config{};
  for (int bit : bits) config.tpcs[bit / 32] |= 1u << (bit % 32);
  config.h = static_cast<uint32_t>(h);
  config.fq_length = static_cast<uint32_t>(fq);
  {  // the GPC map again, as the component's
    uint32_t gpcs = 0;
    uint128_t* masks = nullptr;
    if (libsmctrl_get_gpc_info_ext(&gpcs, &masks, 0) == 0 && gpcs <= 32) {
      config.gpc_count = gpcs;
      for (uint32_t g = 0; g < gpcs; ++g)
        for (int w = 0; w < 4; ++w) config.gpc_tpcs[g][w] = static_cast<uint32_t>(masks[g] >> (32 * w));
    }
  }
  gpupart_smlp* smlp = nullptr;
  if (const int e = gpupart_smlp_open(component, create ? &config : nullptr, &smlp); e != 0) fail("open", e);

  // L: one entry per h TPCs, up to the whole component.
  std::vector<uint32_t> levels;
  for (size_t tpcs = static_cast<size_t>(h); tpcs < medians.size(); tpcs += static_cast<size_t>(h))
    levels.push_back(static_cast<uint32_t>(medians[tpcs] + 0.5));
  const gpupart_smlp_request_spec spec{static_cast<int32_t>(priority), levels.data(), static_cast<uint32_t>(levels.size()),
                                       50000 /* within 5% */, label};

  float* data = nullptr;
  unsigned* sm_device = nullptr;
  check(cudaMalloc(&data, sizeof(float) * static_cast<size_t>(blocks) * kVectorThreads), "malloc");
  check(cudaMemset(data, 0, sizeof(float) * static_cast<size_t>(blocks) * kVectorThreads), "memset");
  check(cudaMalloc(&sm_device, sizeof(unsigned) * static_cast<size_t>(blocks)), "malloc");
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "stream");
  std::vector<unsigned> sms(static_cast<size_t>(blocks));

  vector_work<<<static_cast<unsigned>(blocks), kVectorThreads, 0, stream>>>(data, sm_device, 1);  // warm-up
  check(cudaStreamSynchronize(stream), "warm-up");
  if (start_file != nullptr) wait_for_resume(start_file);
  std::printf("request,ticket,tpcs,allowed_hex,issued_ns,granted_ns,done_ns,sms\n");
  for (long r = 0; r < requests; ++r) {
    gpupart_smlp_grant grant{};
    const uint64_t issued = now_ns();
    if (const int e = gpupart_smlp_lock(smlp, &spec, &grant); e != 0) fail("lock", e);
    const uint64_t granted = now_ns();
    libsmctrl_set_next_mask_ext(grant.disable_mask);
    vector_work<<<static_cast<unsigned>(blocks), kVectorThreads, 0, stream>>>(data, sm_device, static_cast<int>(iterations));
    check(cudaGetLastError(), "launch");
    check(cudaMemcpyAsync(sms.data(), sm_device, sms.size() * sizeof(unsigned), cudaMemcpyDeviceToHost, stream), "copy");
    check(cudaStreamSynchronize(stream), "sync");
    const uint64_t done = now_ns();
    if (const int e = gpupart_smlp_unlock(smlp, &grant); e != 0) fail("unlock", e);
    const std::set<unsigned> distinct(sms.begin(), sms.end());
    std::printf("%ld,%llu,%u,%08x%08x%08x%08x,%llu,%llu,%llu,", r, static_cast<unsigned long long>(grant.ticket), grant.count,
                grant.allowed[3], grant.allowed[2], grant.allowed[1], grant.allowed[0],
                static_cast<unsigned long long>(issued), static_cast<unsigned long long>(granted),
                static_cast<unsigned long long>(done));
    for (unsigned sm : distinct) std::printf(" %u", sm);
    std::printf("\n");
    std::fflush(stdout);
    if (gap_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
  }
  gpupart_smlp_close(smlp);
  return 0;
}
