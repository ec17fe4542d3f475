// Investigation (not a regression test): where the time of a graph re-mask goes. The shim re-masks an exec
// by turning its kernel nodes off and on (the driver then rebuilds their descriptors at the next launch or
// upload). This times, for a chain of K empty kernels, medians over N rounds:
//   steady       a replay (launch and synchronize) of an exec nothing touched
//   toggle       turning every kernel node off and on, on the host
//   after-toggle the replay right after that (the descriptors are rebuilt inside it)
//   upload       toggling, then cuGraphUpload on a second stream and a synchronize of it
//   after-upload the replay right after that upload
// Run it bare and under `gpupart run` (whose launch callback runs once per rebuilt descriptor).
//   gpupart-dev-graph-remask-split [--nodes K] [--rounds N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "../device_program.cuh"

using gpupart_dev::check;

__global__ void empty_kernel() {}

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double replay_us(cudaGraphExec_t exec, cudaStream_t stream) {
  const auto t0 = Clock::now();
  check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  check(cudaStreamSynchronize(stream), "sync");
  return us_since(t0);
}

double toggle_us(cudaGraphExec_t exec, const std::vector<cudaGraphNode_t>& nodes) {
  const auto t0 = Clock::now();
  for (cudaGraphNode_t n : nodes) {
    check(cudaGraphNodeSetEnabled(exec, n, 0), "off");
    check(cudaGraphNodeSetEnabled(exec, n, 1), "on");
  }
  return us_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  const gpupart_dev::Usage usage{"usage: gpupart-dev-graph-remask-split [--nodes K] [--rounds N]\n"};
  long nodes = 200, rounds = 200;
  usage.parse(argc, argv, {{"--nodes", &nodes, 1, 10000}, {"--rounds", &rounds, 5, 100000}});
  cudaStream_t stream, side;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  check(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "side stream");
  cudaGraph_t graph;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture");
  for (long k = 0; k < nodes; ++k) empty_kernel<<<1, 32, 0, stream>>>();
  check(cudaStreamEndCapture(stream, &graph), "end capture");
  size_t count = 0;
  check(cudaGraphGetNodes(graph, nullptr, &count), "nodes");
  std::vector<cudaGraphNode_t> all(count);
  check(cudaGraphGetNodes(graph, all.data(), &count), "nodes");
  cudaGraphExec_t exec;
  check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  for (int i = 0; i < 50; ++i) replay_us(exec, stream);

  std::vector<double> steady, toggle, after_toggle, upload, after_upload;
  for (long r = 0; r < rounds; ++r) {
    steady.push_back(replay_us(exec, stream));
    steady.push_back(replay_us(exec, stream));
    toggle.push_back(toggle_us(exec, all));
    after_toggle.push_back(replay_us(exec, stream));
    const auto t0 = Clock::now();
    toggle_us(exec, all);
    check(cudaGraphUpload(exec, side), "upload");
    check(cudaStreamSynchronize(side), "sync side");
    upload.push_back(us_since(t0));
    after_upload.push_back(replay_us(exec, stream));
  }
  std::printf("nodes %ld rounds %ld steady_us %.1f toggle_us %.1f after_toggle_us %.1f upload_us %.1f "
              "after_upload_us %.1f\n",
              nodes, rounds, median(steady), median(toggle), median(after_toggle), median(upload),
              median(after_upload));
  check(cudaGraphExecDestroy(exec), "exec destroy");
  check(cudaGraphDestroy(graph), "graph destroy");
  return 0;
}
