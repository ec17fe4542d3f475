// gpupart-dev-graph: an ordinary CUDA program (it knows nothing about gpupart) that captures its
// work in a CUDA graph and replays it, reporting for every replay on which SMs the graph's blocks
// ran and whether the numbers they computed are right. graph_tests.sh moves it with `gpupart set`
// between two replays: an uploaded graph must follow the new mask from its next replay, and
// re-masking it must not change what it computes.
//
//   gpupart-dev-graph [--mode plain|destroy|update|child|many|conditional|device] [--replays N]
//                     [--blocks B] [--pause-after K --resume-file PATH]
//
// How the graph is built and kept (--mode, default plain):
//   plain    one kernel captured from a stream, instantiated once, replayed
//   destroy  as plain, but the graph is destroyed right after instantiation (what PyTorch does)
//   update   before every replay the program changes its own exec: before even replays with
//            cudaGraphExecKernelNodeSetParams, before odd ones with cudaGraphExecUpdate from a graph
//            captured anew. Each changes the value added (replay i adds 2 + i)
//   child    the kernel sits in a child graph node of an outer graph
//   many     200 independent kernel nodes, each computing its own slice with ceil(B / 200) blocks
//            (small kernels: not every allowed SM need get a block)
//   conditional  a built graph (not captured) of two nodes: a top-level kernel node that computes
//            nothing and only records its B blocks' SM ids (into a buffer of its own, printed on the
//            "top" line), and after it an if-conditional node whose body graph holds the kernel that
//            does the work. The condition handle is created with default value 1 and
//            cudaGraphCondAssignDefault, so the driver sets it to 1 at the start of every launch and
//            the body runs on every replay (no device code sets it)
//   device   as plain, but instantiated with cudaGraphInstantiateFlagDeviceLaunch and uploaded with
//            cudaGraphUpload right away; every replay is still a cudaGraphLaunch from the host (no
//            kernel launches it from the device: that would need relocatable device code)
// The work: out[i] = 3 x[i] + y[i] + add over 4 Mi floats, x[i] = i % 1000, y[i] = i % 7 and add = 1
// (but for update), all small integers, so the result is exact in float and the host compares every
// element after every replay. Thread 0 of each block also records %smid and spins ~20 us, so that
// the blocks (B, default 4224 = 32 per SM of a 132-SM GPU) spread over every allowed SM.
//
// stdout, each line flushed as soon as it is written:
//   pid <pid> sms_total <multiProcessorCount>
//   graph_exec <the cudaGraphExec_t, as %p prints it>
//   replay <i> sms <count> : <sorted distinct SM ids, single spaces> check ok      (i counts from 0)
//   replay <i> sms <count> : <...> check BAD index <j> got <value> want <value>    (first wrong element)
//   replay <i> sms <count> : <...> check BAD block <b> recorded no SM id           (numbers right)
//   replay <i> sms <count> : <...> check BAD top block <b> recorded no SM id       (conditional)
//   top <i> sms <count> : <sorted distinct SM ids of the top-level kernel>   (conditional: after
//                                                                              each replay line)
//   PAUSED                                   (before replay K, with --pause-after K)
//   done
// Errors go to stderr as "error <where>: <what>". Exit codes: 0 ok, 1 CUDA or usage error,
// 2 resume file not seen within 30 s, 3 watchdog (the whole run took over 120 s), 4 a check failed.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "device_program.cuh"

using gpupart_dev::check;
using gpupart_dev::global_timer_ns;

namespace {

constexpr unsigned kNotWritten = 0xffffffffu;
constexpr unsigned long long kSpinNs = 20000;
constexpr unsigned kThreads = 256;
constexpr size_t kElements = size_t{1} << 22;
constexpr float kA = 3.0f;
constexpr float kCapturedAdd = 1.0f;
constexpr unsigned kManyNodes = 200;
constexpr unsigned kWatchdogS = 120;
constexpr gpupart_dev::Usage kUsage{
    "usage: gpupart-dev-graph [--mode plain|destroy|update|child|many|conditional|device]\n"
    "                         [--replays N] [--blocks B] [--pause-after K --resume-file PATH]\n"};

// What one kernel (one graph node) computes: elements [first, first + count), its blocks' SM ids
// going to ids[id_base + blockIdx.x].
struct Slice {
  const float* x;
  const float* y;
  float* out;
  unsigned long long first;
  unsigned long long count;
  unsigned* ids;
  unsigned id_base;
  float add;
};

}  // namespace

__global__ void axpy_add(Slice s, unsigned long long spin_ns) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long k = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < s.count; k += stride) {
    const unsigned long long i = s.first + k;
    s.out[i] = kA * s.x[i] + s.y[i] + s.add;
  }
  if (threadIdx.x != 0) return;
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  const unsigned long long t0 = global_timer_ns();
  while (global_timer_ns() - t0 < spin_ns) {
  }
  s.ids[s.id_base + blockIdx.x] = smid;
}

namespace {

enum class Mode { plain, destroy, update, child, many, conditional, device };

Mode parse_mode(const char* text) {
  const std::pair<const char*, Mode> modes[] = {{"plain", Mode::plain},
                                                {"destroy", Mode::destroy},
                                                {"update", Mode::update},
                                                {"child", Mode::child},
                                                {"many", Mode::many},
                                                {"conditional", Mode::conditional},
                                                {"device", Mode::device}};
  for (const auto& [name, mode] : modes)
    if (std::strcmp(text, name) == 0) return mode;
  kUsage.error("--mode");
}

// Parameters of one axpy_add node. The driver copies the arguments when it takes the parameters,
// so this only has to live across that call; it is not copyable because args points into it.
struct KernelNode {
  KernelNode(const Slice& s, unsigned blocks) : slice(s) {
    params.func = reinterpret_cast<void*>(axpy_add);
    params.gridDim = dim3(blocks);
    params.blockDim = dim3(kThreads);
    params.sharedMemBytes = 0;
    params.kernelParams = args;
    params.extra = nullptr;
  }
  KernelNode(const KernelNode&) = delete;
  KernelNode& operator=(const KernelNode&) = delete;

  Slice slice;
  unsigned long long spin_ns = kSpinNs;
  void* args[2] = {&slice, &spin_ns};
  cudaKernelNodeParams params{};
};

// One axpy_add over every element, captured from `stream` the way frameworks build their graphs.
// (Global capture mode: PyTorch's default.)
cudaGraph_t capture(cudaStream_t stream, const Slice& s, unsigned blocks) {
  cudaGraph_t graph;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  axpy_add<<<blocks, kThreads, 0, stream>>>(s, kSpinNs);
  check(cudaGetLastError(), "capture axpy_add");
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  return graph;
}

// The same computation as a child graph node: the outer graph holds a copy of the captured one.
cudaGraph_t wrap_in_child(cudaGraph_t inner) {
  cudaGraph_t outer;
  check(cudaGraphCreate(&outer, 0), "cudaGraphCreate outer");
  cudaGraphNode_t child;
  check(cudaGraphAddChildGraphNode(&child, outer, nullptr, 0, inner), "cudaGraphAddChildGraphNode");
  check(cudaGraphDestroy(inner), "cudaGraphDestroy inner");
  return outer;
}

// kManyNodes independent nodes (no edges: the driver may run them side by side), node k computing
// the k-th slice of the elements with `blocks_per_node` blocks.
cudaGraph_t build_many(const Slice& all, unsigned blocks_per_node) {
  cudaGraph_t graph;
  check(cudaGraphCreate(&graph, 0), "cudaGraphCreate");
  for (unsigned k = 0; k < kManyNodes; ++k) {
    Slice s = all;
    s.first = all.count * k / kManyNodes;
    s.count = all.count * (k + 1) / kManyNodes - s.first;
    s.id_base = k * blocks_per_node;
    const KernelNode node(s, blocks_per_node);
    cudaGraphNode_t added;
    check(cudaGraphAddKernelNode(&added, graph, nullptr, 0, &node.params), "cudaGraphAddKernelNode");
  }
  return graph;
}

// --mode conditional: a kernel node that records its blocks' SM ids into top_ids and computes nothing
// (a slice of no elements), then, depending on it, an if-conditional node whose body graph holds
// the kernel computing every element. The handle's default value 1, assigned at the start of every
// launch, makes the body run on every replay. (A graph with a conditional node may have only one
// exec at a time and cannot be a child graph: this one is neither.)
cudaGraph_t build_conditional(const Slice& all, unsigned* top_ids, unsigned blocks) {
  cudaGraph_t graph;
  check(cudaGraphCreate(&graph, 0), "cudaGraphCreate");
  Slice top = all;
  top.count = 0;
  top.ids = top_ids;
  top.id_base = 0;
  const KernelNode top_kernel(top, blocks);
  cudaGraphNode_t top_node;
  check(cudaGraphAddKernelNode(&top_node, graph, nullptr, 0, &top_kernel.params),
        "cudaGraphAddKernelNode top");
  cudaGraphConditionalHandle handle;
  check(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault),
        "cudaGraphConditionalHandleCreate");
  cudaGraphNodeParams conditional{};  // unused bytes must be zero
  conditional.type = cudaGraphNodeTypeConditional;
  conditional.conditional.handle = handle;
  conditional.conditional.type = cudaGraphCondTypeIf;
  conditional.conditional.size = 1;
  cudaGraphNode_t conditional_node;
  check(cudaGraphAddNode(&conditional_node, graph, &top_node, nullptr, 1, &conditional),
        "cudaGraphAddNode conditional");
  cudaGraph_t body = conditional.conditional.phGraph_out[0];  // owned by the node
  const KernelNode work(all, blocks);
  cudaGraphNode_t work_node;
  check(cudaGraphAddKernelNode(&work_node, body, nullptr, 0, &work.params),
        "cudaGraphAddKernelNode body");
  return graph;
}

// --mode update, before replay i: the exec gets add = 2 + i, alternately through the node's
// parameters and through a whole-graph update. `node` is the kernel node of the graph the exec was
// instantiated from; it still names the exec's node after a cudaGraphExecUpdate.
void update_exec(cudaGraphExec_t exec, cudaGraphNode_t node, cudaStream_t stream, Slice s,
                 unsigned blocks, long replay) {
  s.add = 2.0f + static_cast<float>(replay);
  if (replay % 2 == 0) {
    const KernelNode changed(s, blocks);
    check(cudaGraphExecKernelNodeSetParams(exec, node, &changed.params),
          "cudaGraphExecKernelNodeSetParams");
  } else {
    cudaGraph_t fresh = capture(stream, s, blocks);
    cudaGraphExecUpdateResultInfo info{};
    check(cudaGraphExecUpdate(exec, fresh, &info), "cudaGraphExecUpdate");
    check(cudaGraphDestroy(fresh), "cudaGraphDestroy fresh");
  }
}

// "ok", or "BAD ..." naming the first wrong element (or, the numbers being right, the first block
// that recorded no SM id).
std::string verdict(const std::vector<float>& out, const std::vector<float>& x,
                    const std::vector<float>& y, float add, const std::vector<unsigned>& ids) {
  for (size_t i = 0; i < out.size(); ++i) {
    const float want = kA * x[i] + y[i] + add;
    if (!(out[i] == want)) {  // written so that NaN (never written) is wrong too
      char text[128];
      std::snprintf(text, sizeof text, "BAD index %zu got %g want %g", i,
                    static_cast<double>(out[i]), static_cast<double>(want));
      return text;
    }
  }
  const auto missing = std::find(ids.begin(), ids.end(), kNotWritten);
  if (missing != ids.end())
    return "BAD block " + std::to_string(missing - ids.begin()) + " recorded no SM id";
  return "ok";
}

// "sms <count> :" and the distinct SM ids that blocks recorded, ascending.
std::string sm_list(std::vector<unsigned> ids) {
  ids.erase(std::remove(ids.begin(), ids.end(), kNotWritten), ids.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string line = "sms " + std::to_string(ids.size()) + " :";
  for (unsigned id : ids) line += " " + std::to_string(id);
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  gpupart_dev::start_watchdog(kWatchdogS);

  const char* mode_text = "plain";
  long replays = 6;
  long blocks = 4224;
  long pause_after = -1;
  const char* resume_file = nullptr;
  kUsage.parse(argc, argv,
               {{"--mode", &mode_text},
                {"--replays", &replays, 1, 10000},
                {"--blocks", &blocks, 1, 1L << 20},
                {"--pause-after", &pause_after, 0, 10000},
                {"--resume-file", &resume_file}});
  const Mode mode = parse_mode(mode_text);
  if ((pause_after >= 0) != (resume_file != nullptr))
    kUsage.error("--pause-after and --resume-file go together");
  if (pause_after > replays) kUsage.error("--pause-after is larger than --replays");

  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  int sm_count = 0;
  check(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute");
  std::printf("pid %ld sms_total %d\n", static_cast<long>(getpid()), sm_count);
  std::fflush(stdout);

  const auto grid = static_cast<unsigned>(blocks);
  const unsigned per_node = (grid + kManyNodes - 1) / kManyNodes;
  const size_t id_slots = mode == Mode::many ? size_t{kManyNodes} * per_node : grid;

  std::vector<float> x(kElements), y(kElements), out(kElements);
  for (size_t i = 0; i < kElements; ++i) {
    x[i] = static_cast<float>(i % 1000);
    y[i] = static_cast<float>(i % 7);
  }
  float *d_x = nullptr, *d_y = nullptr, *d_out = nullptr;
  unsigned* d_ids = nullptr;
  unsigned* d_top_ids = nullptr;  // --mode conditional: the top-level kernel's SM ids
  const size_t bytes = kElements * sizeof(float);
  check(cudaMalloc(&d_x, bytes), "cudaMalloc x");
  check(cudaMalloc(&d_y, bytes), "cudaMalloc y");
  check(cudaMalloc(&d_out, bytes), "cudaMalloc out");
  check(cudaMalloc(&d_ids, id_slots * sizeof(unsigned)), "cudaMalloc ids");
  if (mode == Mode::conditional)
    check(cudaMalloc(&d_top_ids, grid * sizeof(unsigned)), "cudaMalloc top ids");
  check(cudaMemcpy(d_x, x.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy x");
  check(cudaMemcpy(d_y, y.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy y");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");

  const Slice all{d_x, d_y, d_out, 0, kElements, d_ids, 0, kCapturedAdd};
  cudaGraph_t graph = nullptr;  // kept until the end, but for --mode destroy
  switch (mode) {
    case Mode::plain:
    case Mode::destroy:
    case Mode::update:
    case Mode::device: graph = capture(stream, all, grid); break;
    case Mode::child: graph = wrap_in_child(capture(stream, all, grid)); break;
    case Mode::many: graph = build_many(all, per_node); break;
    case Mode::conditional: graph = build_conditional(all, d_top_ids, grid); break;
  }
  cudaGraphExec_t exec;
  if (mode == Mode::device) {
    check(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagDeviceLaunch),
          "cudaGraphInstantiateWithFlags device launch");
    check(cudaGraphUpload(exec, stream), "cudaGraphUpload");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize upload");
  } else {
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  }
  if (mode == Mode::destroy) {
    check(cudaGraphDestroy(graph), "cudaGraphDestroy");
    graph = nullptr;
  }
  cudaGraphNode_t kernel_node = nullptr;  // --mode update: the one node of the captured graph
  if (mode == Mode::update) {
    size_t count = 1;
    check(cudaGraphGetNodes(graph, &kernel_node, &count), "cudaGraphGetNodes");
    if (count != 1) {
      std::fprintf(stderr, "error capture: %zu nodes, not 1\n", count);
      return 1;
    }
  }
  std::printf("graph_exec %p\n", static_cast<void*>(exec));
  std::fflush(stdout);

  bool all_ok = true;
  std::vector<unsigned> ids(id_slots);
  std::vector<unsigned> top_ids(d_top_ids != nullptr ? grid : 0);
  for (long i = 0; i <= replays; ++i) {
    if (i == pause_after) gpupart_dev::wait_for_resume(resume_file);
    if (i == replays) break;

    float add = kCapturedAdd;
    if (mode == Mode::update) {
      update_exec(exec, kernel_node, stream, all, grid, i);
      add = 2.0f + static_cast<float>(i);
    }
    // Mark every SM id unwritten and every result NaN (all bits set), so work that never ran shows.
    check(cudaMemsetAsync(d_ids, 0xff, id_slots * sizeof(unsigned), stream), "cudaMemsetAsync ids");
    check(cudaMemsetAsync(d_out, 0xff, bytes, stream), "cudaMemsetAsync out");
    if (d_top_ids != nullptr)
      check(cudaMemsetAsync(d_top_ids, 0xff, grid * sizeof(unsigned), stream),
            "cudaMemsetAsync top ids");
    check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    check(cudaMemcpy(ids.data(), d_ids, id_slots * sizeof(unsigned), cudaMemcpyDeviceToHost),
          "cudaMemcpy ids");
    check(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy out");
    if (d_top_ids != nullptr)
      check(cudaMemcpy(top_ids.data(), d_top_ids, grid * sizeof(unsigned), cudaMemcpyDeviceToHost),
            "cudaMemcpy top ids");

    std::string result = verdict(out, x, y, add, ids);
    const auto top_missing = std::find(top_ids.begin(), top_ids.end(), kNotWritten);
    if (result == "ok" && top_missing != top_ids.end())
      result = "BAD top block " + std::to_string(top_missing - top_ids.begin()) +
               " recorded no SM id";
    all_ok = all_ok && result == "ok";
    std::printf("replay %ld %s check %s\n", i, sm_list(ids).c_str(), result.c_str());
    if (d_top_ids != nullptr) std::printf("top %ld %s\n", i, sm_list(top_ids).c_str());
    std::fflush(stdout);
  }

  check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  if (graph != nullptr) check(cudaGraphDestroy(graph), "cudaGraphDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  for (void* p : {static_cast<void*>(d_x), static_cast<void*>(d_y), static_cast<void*>(d_out),
                  static_cast<void*>(d_ids), static_cast<void*>(d_top_ids)})
    check(cudaFree(p), "cudaFree");  // cudaFree(nullptr) does nothing
  std::printf("done\n");
  std::fflush(stdout);
  return all_ok ? 0 : 4;
}
