// Investigation (not a regression test): which CUDA graph operations make the driver build
// an uploaded graph's kernel descriptors again, so that the shim's launch callback runs and a new TPC
// mask reaches the graph. Runs under the shim (`gpupart run --tpcs gpc1 ...`). Before each mechanism it
// flips its own registry slot's mask between gpc1 and gpc6 (it owns that file), replays the graph once
// plainly (expected: still the old mask), applies the mechanism, and replays again. For every replay it
// prints the shim's callback count delta and the SMs the kernel used.
//   graph_mechanisms GPC_A_HEX GPC_B_HEX REAL_HEX
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <glob.h>
#include <set>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

#include "registry_layout.h"
#include "registry_slot.h"

namespace {

void check(cudaError_t err, const char* where) {
  if (err != cudaSuccess) {
    std::printf("error %s: %s\n", where, cudaGetErrorString(err));
    std::exit(1);
  }
}

__global__ void record_smid(unsigned* out, int marker) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < 20000);
  if (threadIdx.x == 0) out[blockIdx.x] = id + 0u * static_cast<unsigned>(marker);
}

constexpr int kBlocks = 4224;
gpupart_slot_file* g_slot = nullptr;
uint32_t g_masks[2][4];
uint32_t g_real[4];
int g_which = 0;

gpupart_slot_file* own_slot() {
  const char* dir = std::getenv("GPUPART_REGISTRY_DIR");
  std::string pattern = std::string(dir ? dir : "/dev/shm/gpupart") + "/" + std::to_string(getpid()) + "-*.slot";
  glob_t found{};
  if (glob(pattern.c_str(), 0, nullptr, &found) != 0 || found.gl_pathc != 1) {
    std::printf("error: no slot %s (run this under gpupart run)\n", pattern.c_str());
    std::exit(1);
  }
  int fd = open(found.gl_pathv[0], O_RDWR);
  void* memory = mmap(nullptr, GPUPART_SLOT_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  globfree(&found);
  return static_cast<gpupart_slot_file*>(memory);
}

uint64_t callbacks() { return __atomic_load_n(&g_slot->counters.launches, __ATOMIC_RELAXED); }

// The process is the only writer of its own control block here, so no lock is needed. Registry layout 4:
// the entry of the one GPU `gpupart run` gave the process a mask for.
void flip_mask() {
  g_which = 1 - g_which;
  gpupart_control now{};
  if (gpupart_control_read(&g_slot->control, &now, 64) != 0 || now.current.count != 1) {
    std::printf("error: the slot holds no single GPU mask to flip\n");
    std::exit(1);
  }
  gpupart_control_payload c = now.current;
  c.generation += 1;
  c.writer_pid = getpid();
  c.gpus[0].flags = GPUPART_CONTROL_HAS_MASK;
  for (int i = 0; i < 4; ++i) {
    c.gpus[0].allowed[i] = g_masks[g_which][i];
    c.gpus[0].real_tpcs[i] = g_real[i];
  }
  gpupart_control_write(&g_slot->control, &c);
}

std::set<unsigned> replay(cudaGraphExec_t exec, cudaStream_t stream, unsigned* d_ids, std::vector<unsigned>& ids,
                          const char* step) {
  const uint64_t before = callbacks();
  check(cudaGraphLaunch(exec, stream), step);
  check(cudaStreamSynchronize(stream), step);
  check(cudaMemcpy(ids.data(), d_ids, ids.size() * sizeof(unsigned), cudaMemcpyDeviceToHost), "copy");
  std::set<unsigned> sms(ids.begin(), ids.end());
  std::printf("%-44s callbacks +%llu  sms %zu : %u..%u  (mask now %s)\n", step,
              static_cast<unsigned long long>(callbacks() - before), sms.size(), *sms.begin(), *sms.rbegin(),
              g_which == 0 ? "A" : "B");
  std::fflush(stdout);
  return sms;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || gpupart_parse_hex_mask(argv[1], g_masks[0]) || gpupart_parse_hex_mask(argv[2], g_masks[1]) ||
      gpupart_parse_hex_mask(argv[3], g_real)) {
    std::printf("usage: graph_mechanisms GPC_A_HEX GPC_B_HEX REAL_HEX\n");
    return 1;
  }
  check(cudaFree(nullptr), "init");
  g_slot = own_slot();
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  unsigned* d_ids;
  check(cudaMalloc(&d_ids, kBlocks * sizeof(unsigned)), "malloc");
  std::vector<unsigned> ids(kBlocks);

  auto capture = [&](int marker) {
    cudaGraph_t graph;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
    record_smid<<<kBlocks, 64, 0, stream>>>(d_ids, marker);
    check(cudaStreamEndCapture(stream, &graph), "end capture");
    return graph;
  };
  cudaGraph_t graph = capture(0);
  cudaGraphExec_t exec;
  check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  size_t count = 1;
  cudaGraphNode_t node;
  check(cudaGraphGetNodes(graph, &node, &count), "nodes");
  cudaKernelNodeParams params{};
  check(cudaGraphKernelNodeGetParams(node, &params), "get params");

  g_which = 0;  // started by gpupart run with mask A
  replay(exec, stream, d_ids, ids, "first launch (uploads)");
  replay(exec, stream, d_ids, ids, "second launch");

  struct Mechanism {
    const char* name;
    void (*apply)(cudaGraphExec_t, cudaGraphNode_t, cudaKernelNodeParams&, cudaStream_t, cudaGraph_t);
  };
  const Mechanism mechanisms[] = {
      {"ExecKernelNodeSetParams changed grid", [](cudaGraphExec_t e, cudaGraphNode_t n, cudaKernelNodeParams& p, cudaStream_t, cudaGraph_t) {
         cudaKernelNodeParams changed = p;
         changed.gridDim.x = p.gridDim.x - 1;
         check(cudaGraphExecKernelNodeSetParams(e, n, &changed), "set grid changed");
         check(cudaGraphExecKernelNodeSetParams(e, n, &p), "set grid back");
       }},
      {"cudaGraphUpload again", [](cudaGraphExec_t e, cudaGraphNode_t, cudaKernelNodeParams&, cudaStream_t s, cudaGraph_t) {
         check(cudaGraphUpload(e, s), "upload");
       }},
      {"ExecKernelNodeSetParams identical", [](cudaGraphExec_t e, cudaGraphNode_t n, cudaKernelNodeParams& p, cudaStream_t, cudaGraph_t) {
         check(cudaGraphExecKernelNodeSetParams(e, n, &p), "set params");
       }},
      {"ExecKernelNodeSetParams changed arg", [](cudaGraphExec_t e, cudaGraphNode_t n, cudaKernelNodeParams& p, cudaStream_t, cudaGraph_t) {
         int other = 1;
         void* args[2] = {p.kernelParams[0], &other};
         cudaKernelNodeParams changed = p;
         changed.kernelParams = args;
         check(cudaGraphExecKernelNodeSetParams(e, n, &changed), "set params changed");
       }},
      {"GraphNodeSetEnabled off then on", [](cudaGraphExec_t e, cudaGraphNode_t n, cudaKernelNodeParams&, cudaStream_t, cudaGraph_t) {
         check(cudaGraphNodeSetEnabled(e, n, 0), "disable");
         check(cudaGraphNodeSetEnabled(e, n, 1), "enable");
       }},
      {"GraphExecUpdate with the same graph", [](cudaGraphExec_t e, cudaGraphNode_t, cudaKernelNodeParams&, cudaStream_t, cudaGraph_t g) {
         cudaGraphExecUpdateResultInfo info{};
         check(cudaGraphExecUpdate(e, g, &info), "exec update");
       }},
  };
  for (const Mechanism& m : mechanisms) {
    flip_mask();
    replay(exec, stream, d_ids, ids, (std::string(m.name) + ": plain replay").c_str());
    m.apply(exec, node, params, stream, graph);
    replay(exec, stream, d_ids, ids, (std::string(m.name) + ": after it").c_str());
    replay(exec, stream, d_ids, ids, (std::string(m.name) + ": and again").c_str());
  }
  // A kernel inside a child graph node: can the node toggle reach it? (cudaGraphNodeSetEnabled takes
  // kernel, memcpy and memset nodes of the exec's own graph.)
  {
    cudaGraph_t inner = capture(0);
    cudaGraph_t outer;
    check(cudaGraphCreate(&outer, 0), "create outer");
    cudaGraphNode_t child;
    check(cudaGraphAddChildGraphNode(&child, outer, nullptr, 0, inner), "child node");
    cudaGraphExec_t child_exec;
    check(cudaGraphInstantiate(&child_exec, outer, 0), "instantiate outer");
    replay(child_exec, stream, d_ids, ids, "child graph: first launch");
    flip_mask();
    replay(child_exec, stream, d_ids, ids, "child graph: plain replay");
    const cudaError_t off = cudaGraphNodeSetEnabled(child_exec, child, 0);
    std::printf("child graph: SetEnabled on the child node -> %s\n", cudaGetErrorString(off));
    if (off == cudaSuccess) check(cudaGraphNodeSetEnabled(child_exec, child, 1), "enable child");
    (void)cudaGetLastError();
    replay(child_exec, stream, d_ids, ids, "child graph: after the toggle");
    check(cudaGraphExecChildGraphNodeSetParams(child_exec, child, inner), "child set params");
    replay(child_exec, stream, d_ids, ids, "child graph: after ChildGraphNodeSetParams");
    // The kernel node inside the child graph, changed through the exec (grid changed, then back).
    cudaGraph_t embedded;
    check(cudaGraphChildGraphNodeGetGraph(child, &embedded), "child graph of node");
    size_t n = 1;
    cudaGraphNode_t inner_node;
    check(cudaGraphGetNodes(embedded, &inner_node, &n), "inner nodes");
    cudaKernelNodeParams p{};
    check(cudaGraphKernelNodeGetParams(inner_node, &p), "inner params");
    cudaKernelNodeParams changed = p;
    changed.gridDim.x = p.gridDim.x - 1;
    const cudaError_t grid = cudaGraphExecKernelNodeSetParams(child_exec, inner_node, &changed);
    std::printf("child graph: exec SetParams on the inner kernel node -> %s\n", cudaGetErrorString(grid));
    if (grid == cudaSuccess) check(cudaGraphExecKernelNodeSetParams(child_exec, inner_node, &p), "inner back");
    const cudaError_t toggle = cudaGraphNodeSetEnabled(child_exec, inner_node, 0);
    std::printf("child graph: SetEnabled on the inner kernel node -> %s\n", cudaGetErrorString(toggle));
    if (toggle == cudaSuccess) check(cudaGraphNodeSetEnabled(child_exec, inner_node, 1), "inner enable");
    (void)cudaGetLastError();
    replay(child_exec, stream, d_ids, ids, "child graph: after the inner-node changes");
  }
  // What a toggle costs on a large graph: 2000 small kernels, as a model's captured step might have.
  {
    constexpr int kNodes = 2000;
    cudaGraph_t big;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "big capture");
    for (int i = 0; i < kNodes; ++i) record_smid<<<1, 32, 0, stream>>>(d_ids, i);
    check(cudaStreamEndCapture(stream, &big), "big end");
    cudaGraphExec_t big_exec;
    check(cudaGraphInstantiate(&big_exec, big, 0), "big instantiate");
    std::vector<cudaGraphNode_t> nodes(kNodes);
    size_t got = kNodes;
    check(cudaGraphGetNodes(big, nodes.data(), &got), "big nodes");
    auto timed_launch = [&](const char* what) {
      const uint64_t before = callbacks();
      const auto t0 = std::chrono::steady_clock::now();
      check(cudaGraphLaunch(big_exec, stream), what);
      check(cudaStreamSynchronize(stream), what);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::printf("big graph (%d kernels): %-34s %8.3f ms, callbacks +%llu\n", kNodes, what, ms,
                  static_cast<unsigned long long>(callbacks() - before));
    };
    timed_launch("first launch (upload)");
    timed_launch("steady launch");
    timed_launch("steady launch");
    const auto t0 = std::chrono::steady_clock::now();
    for (cudaGraphNode_t node_i : nodes) {
      check(cudaGraphNodeSetEnabled(big_exec, node_i, 0), "big off");
      check(cudaGraphNodeSetEnabled(big_exec, node_i, 1), "big on");
    }
    const double toggle_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("big graph (%d kernels): toggling every node took %.3f ms on the host\n", kNodes, toggle_ms);
    timed_launch("launch after the toggle");
    timed_launch("steady launch");
  }
  // A graph instantiated for device launch: may its kernel node be toggled or re-parameterised?
  {
    cudaGraph_t device_graph = capture(0);
    cudaGraphExec_t device_exec;
    const cudaError_t made = cudaGraphInstantiateWithFlags(&device_exec, device_graph, cudaGraphInstantiateFlagDeviceLaunch);
    std::printf("device-launch graph: instantiate -> %s\n", cudaGetErrorString(made));
    if (made == cudaSuccess) {
      check(cudaGraphUpload(device_exec, stream), "upload device graph");
      replay(device_exec, stream, d_ids, ids, "device-launch graph: first launch");
      flip_mask();
      size_t n = 1;
      cudaGraphNode_t device_node;
      check(cudaGraphGetNodes(device_graph, &device_node, &n), "device nodes");
      const cudaError_t off = cudaGraphNodeSetEnabled(device_exec, device_node, 0);
      std::printf("device-launch graph: SetEnabled -> %s\n", cudaGetErrorString(off));
      if (off == cudaSuccess) check(cudaGraphNodeSetEnabled(device_exec, device_node, 1), "enable device node");
      (void)cudaGetLastError();
      cudaKernelNodeParams p{};
      check(cudaGraphKernelNodeGetParams(device_node, &p), "device params");
      cudaKernelNodeParams changed = p;
      changed.gridDim.x = p.gridDim.x - 1;
      const cudaError_t grid = cudaGraphExecKernelNodeSetParams(device_exec, device_node, &changed);
      std::printf("device-launch graph: SetParams changed grid -> %s\n", cudaGetErrorString(grid));
      if (grid == cudaSuccess) check(cudaGraphExecKernelNodeSetParams(device_exec, device_node, &p), "grid back");
      (void)cudaGetLastError();
      replay(device_exec, stream, d_ids, ids, "device-launch graph: after both");
    }
    (void)cudaGetLastError();
  }
  // An application that disabled a node itself: GetEnabled says so, so a toggle can leave it alone.
  {
    flip_mask();
    check(cudaGraphNodeSetEnabled(exec, node, 0), "app disables");
    unsigned enabled = 1;
    check(cudaGraphNodeGetEnabled(exec, node, &enabled), "get enabled");
    std::printf("app-disabled node: GetEnabled -> %u\n", enabled);
    check(cudaGraphNodeSetEnabled(exec, node, 1), "app enables");
    replay(exec, stream, d_ids, ids, "after the app re-enabled it");
  }
  std::printf("done\n");
  return 0;
}
