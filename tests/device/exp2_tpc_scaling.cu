// gpupart-dev-exp2: Ali et al.'s (ECRTS 2024) Experiment 2 through libgpupart's libsmctrl API: the length of one
// kernel with its work sized for a few SMs, on 1, 2, ... N TPCs (GPC-packed, chosen with
// libsmctrl_set_next_mask_ext), and a calibration of which SMs each TPC bit holds.
//
//   gpupart-dev-exp2 [--blocks B] [--iterations I] [--reps R] [--calibrate]
//
// stdout (CSV):
//   with --calibrate:  "bit,sms" then one line per real TPC bit: <bit>,<SM ids separated by spaces>
//   otherwise:         "tpcs,median_us,min_us,max_us,sms_used,outside" per TPC count, where sms_used is
//                      the distinct SMs the blocks ran on and outside counts blocks that ran on an SM not
//                      in the allowed TPCs (needs the calibration: --check FILE)
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "api_kernel.cuh"

using namespace gpupart_dev;

namespace {

const Usage kUsage{"usage: gpupart-dev-exp2 [--blocks B] [--iterations I] [--reps R] [--calibrate | --check FILE]\n"};

// One launch allowed on `disable`'s complement; returns its length in microseconds and the SMs used.
float launch_once(uint128_t disable, float* data, unsigned* sm_device, long blocks, long iterations,
                  std::vector<unsigned>& sms) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  check(cudaEventRecord(start), "record");
  libsmctrl_set_next_mask_ext(disable);  // the next launch of this thread: the kernel, not the event
  vector_work<<<static_cast<unsigned>(blocks), kVectorThreads>>>(data, sm_device, static_cast<int>(iterations));
  check(cudaGetLastError(), "launch");
  check(cudaEventRecord(stop), "record");
  check(cudaEventSynchronize(stop), "sync");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
  sms.resize(static_cast<size_t>(blocks));
  check(cudaMemcpy(sms.data(), sm_device, sms.size() * sizeof(unsigned), cudaMemcpyDeviceToHost), "copy");
  check(cudaEventDestroy(start), "event");
  check(cudaEventDestroy(stop), "event");
  return ms * 1000.0f;
}

std::map<int, std::set<unsigned>> read_calibration(const char* path) {
  std::map<int, std::set<unsigned>> sms_of_bit;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    int bit = 0;
    char comma = 0;
    fields >> bit >> comma;
    unsigned sm = 0;
    while (fields >> sm) sms_of_bit[bit].insert(sm);
  }
  if (sms_of_bit.empty()) kUsage.error("--check: no calibration lines");
  return sms_of_bit;
}

}  // namespace

int main(int argc, char** argv) {
  start_watchdog(300);
  long blocks = 32, iterations = 200000, reps = 7;
  bool calibrate = false;
  const char* check_file = nullptr;
  kUsage.parse(argc, argv,
               {{"--blocks", &blocks, 1, 65536}, {"--iterations", &iterations, 1, 100000000}, {"--reps", &reps, 1, 1000},
                {"--calibrate", &calibrate}, {"--check", &check_file}});
  const std::vector<int> bits = gpc_packed_bits(0);
  float* data = nullptr;
  unsigned* sm_device = nullptr;
  check(cudaMalloc(&data, sizeof(float) * static_cast<size_t>(blocks) * kVectorThreads), "malloc");
  check(cudaMemset(data, 0, sizeof(float) * static_cast<size_t>(blocks) * kVectorThreads), "memset");
  check(cudaMalloc(&sm_device, sizeof(unsigned) * static_cast<size_t>(blocks)), "malloc");
  std::vector<unsigned> sms;
  if (calibrate) {  // every TPC bit alone: which SMs it holds
    std::printf("bit,sms\n");
    for (int bit : bits) {
      launch_once(~(static_cast<uint128_t>(1) << bit), data, sm_device, 8, 1000, sms);
      const std::set<unsigned> distinct(sms.begin(), sms.end());
      std::printf("%d,", bit);
      for (unsigned sm : distinct) std::printf(" %u", sm);
      std::printf("\n");
    }
    return 0;
  }
  const auto sms_of_bit = check_file != nullptr ? read_calibration(check_file) : std::map<int, std::set<unsigned>>{};
  launch_once(allow_first(bits, bits.size()), data, sm_device, blocks, iterations, sms);  // warm-up
  std::printf("tpcs,median_us,min_us,max_us,sms_used,outside\n");
  for (size_t n = 1; n <= bits.size(); ++n) {
    std::vector<float> times;
    std::set<unsigned> used;
    long outside = 0;
    std::set<unsigned> allowed_sms;
    for (size_t i = 0; i < n; ++i)
      if (auto it = sms_of_bit.find(bits[i]); it != sms_of_bit.end()) allowed_sms.insert(it->second.begin(), it->second.end());
    for (long r = 0; r < reps; ++r) {
      times.push_back(launch_once(allow_first(bits, n), data, sm_device, blocks, iterations, sms));
      for (unsigned sm : sms) {
        used.insert(sm);
        if (!sms_of_bit.empty() && allowed_sms.count(sm) == 0) ++outside;
      }
    }
    std::sort(times.begin(), times.end());
    std::printf("%zu,%.1f,%.1f,%.1f,%zu,%ld\n", n, times[times.size() / 2], times.front(), times.back(), used.size(),
                outside);
    std::fflush(stdout);
  }
  return 0;
}
