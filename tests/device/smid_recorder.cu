// gpupart-dev-smid: an ordinary CUDA program (it knows nothing about gpupart) that reports,
// launch after launch, on which SMs its blocks ran. The device tests run it under the shim
// and compare the SM ids it prints with the TPC mask they asked for.
//
//   gpupart-dev-smid [--launches N] [--blocks B] [--interval-ms M] [--graph]
//                    [--pause-after K --resume-file PATH]
//
// stdout, each line flushed as soon as it is written:
//   pid <pid> sms_total <multiProcessorCount>
//   launch <i> sms <count> : <sorted distinct SM ids, single spaces>     (i counts from 0)
//   PAUSED                                   (after K launches, with --pause-after K)
// Errors go to stderr as "error <where>: <what>". Exit codes: 0 ok, 1 CUDA or usage error,
// 2 resume file not seen within 30 s, 3 watchdog (the whole run took over 60 s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
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
constexpr unsigned kWatchdogS = 60;
constexpr gpupart_dev::Usage kUsage{
    "usage: gpupart-dev-smid [--launches N] [--blocks B] [--interval-ms M] [--graph]\n"
    "                        [--pause-after K --resume-file PATH]\n"};

}  // namespace

int main(int argc, char** argv) {
  gpupart_dev::start_watchdog(kWatchdogS);

  long launches = 20;
  long blocks = 0;  // 0: 4 * number of SMs
  long interval_ms = 0;
  long pause_after = -1;
  const char* resume_file = nullptr;
  bool use_graph = false;

  kUsage.parse(argc, argv,
               {{"--graph", &use_graph},
                {"--launches", &launches, 1, 100000},
                {"--blocks", &blocks, 1, 1L << 20},
                {"--interval-ms", &interval_ms, 0, 60000},
                {"--pause-after", &pause_after, 0, 100000},
                {"--resume-file", &resume_file}});
  if ((pause_after >= 0) != (resume_file != nullptr))
    kUsage.error("--pause-after and --resume-file go together");
  if (pause_after > launches) kUsage.error("--pause-after is larger than --launches");

  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  int sm_count = 0;
  check(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute");
  if (blocks == 0) blocks = 4L * sm_count;
  std::printf("pid %ld sms_total %d\n", static_cast<long>(getpid()), sm_count);
  std::fflush(stdout);

  const auto n = static_cast<size_t>(blocks);
  unsigned* d_ids = nullptr;
  check(cudaMalloc(&d_ids, n * sizeof(unsigned)), "cudaMalloc");
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");

  const dim3 grid(static_cast<unsigned>(blocks));
  const dim3 block(64);

  // --graph: capture the kernel once; every launch then replays the same executable graph.
  cudaGraphExec_t graph_exec = nullptr;
  if (use_graph) {
    cudaGraph_t graph;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
    record_smid<<<grid, block, 0, stream>>>(d_ids, kSpinNs);
    check(cudaGetLastError(), "capture record_smid");
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    check(cudaGraphInstantiate(&graph_exec, graph, 0), "cudaGraphInstantiate");
    check(cudaGraphDestroy(graph), "cudaGraphDestroy");
  }

  std::vector<unsigned> ids(n);
  for (long i = 0; i <= launches; ++i) {
    if (i == pause_after) wait_for_resume(resume_file);
    if (i == launches) break;
    if (i > 0 && interval_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));

    // Mark every slot unwritten, so a block that never ran is caught below.
    check(cudaMemsetAsync(d_ids, 0xff, n * sizeof(unsigned), stream), "cudaMemsetAsync");
    if (use_graph) {
      check(cudaGraphLaunch(graph_exec, stream), "cudaGraphLaunch");
    } else {
      record_smid<<<grid, block, 0, stream>>>(d_ids, kSpinNs);
      check(cudaGetLastError(), "launch record_smid");
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    check(cudaMemcpy(ids.data(), d_ids, n * sizeof(unsigned), cudaMemcpyDeviceToHost),
          "cudaMemcpy");

    if (std::find(ids.begin(), ids.end(), kNotWritten) != ids.end()) {
      std::fprintf(stderr, "error launch %ld: a block recorded no SM id\n", i);
      return 1;
    }
    std::sort(ids.begin(), ids.end());
    const auto last = std::unique(ids.begin(), ids.end());
    std::string line = "launch " + std::to_string(i) + " sms " +
                       std::to_string(last - ids.begin()) + " :";
    for (auto it = ids.begin(); it != last; ++it) line += " " + std::to_string(*it);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  if (graph_exec != nullptr) check(cudaGraphExecDestroy(graph_exec), "cudaGraphExecDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  check(cudaFree(d_ids), "cudaFree");
  return 0;
}
