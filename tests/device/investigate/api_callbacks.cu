// Investigation (not a regression test): can the shim see an unmodified process's graph
// calls (instantiate, launch, upload, destroy) through the same driver tools-callback table it uses for
// launch descriptors, instead of interposing dlsym/cuGetProcAddress? And can it, from inside the
// "enter" callback of cuGraphLaunch, toggle the exec's kernel nodes so that this very launch rebuilds
// their descriptors with the new mask?
// The table takes one subscriber per process (a second subscribe under the shim returned 210), so this
// program runs WITHOUT the shim and is its own subscriber: it writes the masks itself from the launch
// descriptor callback (domain 0xb), as the shim does, and watches the driver-API domain (1) too.
//   api_callbacks GPC_A_HEX GPC_B_HEX REAL_HEX
// The callback side (the tools-callback table, the descriptor mask write, census and dumps) is in
// api_callbacks_subscriber.cuh; this file has the kernels and the experiments that drive it.
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <set>
#include <string>
#include <vector>

#include "api_callbacks_subscriber.cuh"
#include "registry_slot.h"

using namespace api_callbacks;

namespace {

void check(cudaError_t err, const char* where) {
  if (err != cudaSuccess) {
    std::printf("error %s: %s\n", where, cudaGetErrorString(err));
    std::exit(1);
  }
}

__global__ void record_smid(unsigned* out) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < 20000);
  if (threadIdx.x == 0) out[blockIdx.x] = id;
}
__global__ void empty_kernel() {}

constexpr int kBlocks = 4224;

}  // namespace

std::set<unsigned> replay(cudaGraphExec_t exec, cudaStream_t stream, unsigned* d_ids, std::vector<unsigned>& ids,
                          const char* step) {
  const uint64_t before = g_descriptor_callbacks;
  check(cudaGraphLaunch(exec, stream), step);
  check(cudaStreamSynchronize(stream), step);
  check(cudaMemcpy(ids.data(), d_ids, ids.size() * sizeof(unsigned), cudaMemcpyDeviceToHost), "copy");
  std::set<unsigned> sms(ids.begin(), ids.end());
  std::printf("%-50s descriptor callbacks +%llu  sms %zu : %u..%u  (mask now %s)\n", step,
              static_cast<unsigned long long>(g_descriptor_callbacks - before),
              sms.size(), *sms.begin(), *sms.rbegin(), g_which == 0 ? "A" : "B");
  std::fflush(stdout);
  return sms;
}

int main(int argc, char** argv) {
  if (argc != 4 || gpupart_parse_hex_mask(argv[1], g_masks[0]) || gpupart_parse_hex_mask(argv[2], g_masks[1]) ||
      gpupart_parse_hex_mask(argv[3], g_real)) {
    std::printf("usage: api_callbacks GPC_A_HEX GPC_B_HEX REAL_HEX\n");
    return 1;
  }
  check(cudaFree(nullptr), "init");
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
  using get_table_fn = CUresult (*)(const void**, const void*);
  auto get_table = reinterpret_cast<get_table_fn>(dlsym(libcuda, "cuGetExportTable"));
  g_set_enabled = reinterpret_cast<set_enabled_fn>(dlsym(libcuda, "cuGraphNodeSetEnabled"));
  const void* table = nullptr;
  std::printf("export table -> %d\n", get_table(&table, kTableId));
  auto subscribe = reinterpret_cast<subscribe_fn>(static_cast<void* const*>(table)[3]);
  auto enable = reinterpret_cast<enable_fn>(static_cast<void* const*>(table)[6]);
  uint32_t handle = 0;
  const int sub = subscribe(&handle, on_api, nullptr);
  std::printf("subscribe -> %d (handle %u); enable domain 0xb cbid 1 -> %d\n", sub, handle, enable(1, handle, 0xb, 1));
  const int cbids[] = {513, 514, 515, 516, 517, 578, 580, 643, 656};
  for (int cbid : cbids) std::printf("enable domain 6 cbid %d -> %d\n", cbid, enable(1, handle, 6, cbid));

  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  // ONE_NODE: does toggling one kernel node make the driver rebuild the descriptors of the exec's other
  // kernel nodes too? 200 one-block kernels, each recording its SM id in its own slot.
  if (std::getenv("ONE_NODE") != nullptr) {
    constexpr int kNodes = 200;
    unsigned* ids_d;
    check(cudaMalloc(&ids_d, kNodes * sizeof(unsigned)), "malloc");
    cudaGraph_t g;
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
    for (int k = 0; k < kNodes; ++k) record_smid<<<1, 32, 0, stream>>>(ids_d + k);
    check(cudaStreamEndCapture(stream, &g), "end capture");
    cudaGraphExec_t e;
    check(cudaGraphInstantiate(&e, g, 0), "instantiate");
    std::vector<cudaGraphNode_t> nodes(kNodes);
    size_t n = kNodes;
    check(cudaGraphGetNodes(g, nodes.data(), &n), "nodes");
    std::vector<unsigned> host(kNodes);
    auto run = [&](const char* what) {
      const uint64_t before = g_descriptor_callbacks;
      check(cudaGraphLaunch(e, stream), what);
      check(cudaStreamSynchronize(stream), what);
      check(cudaMemcpy(host.data(), ids_d, kNodes * sizeof(unsigned), cudaMemcpyDeviceToHost), "copy");
      int in_a = 0, in_b = 0;
      for (unsigned id : host) (id >= 2 && id <= 107 && (id % 16 == 2 || id % 16 == 3 || id >= 124) ? in_a : in_b)++;
      std::printf("%-40s descriptor callbacks +%llu  first kernel sm %u, last kernel sm %u\n", what,
                  static_cast<unsigned long long>(g_descriptor_callbacks - before), host[0], host[kNodes - 1]);
      std::set<unsigned> all(host.begin(), host.end());
      std::printf("    sms used:");
      for (unsigned id : all) std::printf(" %u", id);
      std::printf("\n");
      (void)in_a; (void)in_b;
    };
    run("first launch (mask A)");
    flip_mask();
    run("plain replay after flip to B");
    const auto t0 = std::chrono::steady_clock::now();
    check(cudaGraphNodeSetEnabled(e, nodes[0], 0), "off");
    check(cudaGraphNodeSetEnabled(e, nodes[0], 1), "on");
    std::printf("one toggle took %.1f us\n", std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    run("after toggling node 0 only");
    flip_mask();
    const auto t1 = std::chrono::steady_clock::now();
    unsigned en = 0;
    for (auto node : nodes) check(cudaGraphNodeGetEnabled(e, node, &en), "get");
    const auto t2 = std::chrono::steady_clock::now();
    for (auto node : nodes) {
      check(cudaGraphNodeSetEnabled(e, node, 0), "off");
      check(cudaGraphNodeSetEnabled(e, node, 1), "on");
    }
    const auto t3 = std::chrono::steady_clock::now();
    std::printf("200 GetEnabled %.1f us, 200 toggles %.1f us\n", std::chrono::duration<double, std::micro>(t2 - t1).count(),
                std::chrono::duration<double, std::micro>(t3 - t2).count());
    run("after toggling all (back to A)");
    return 0;
  }
  if (std::getenv("CENSUS") != nullptr) {
    for (int d = 0; d < 32; ++d) {
      if (d == 0xb) continue;
      int accepted = 0;
      for (int c = 0; c < 1024; ++c) accepted += enable(1, handle, d, c) == 0;
      if (accepted) std::printf("domain %d: %d cbids accepted\n", d, accepted);
    }
    g_census = true;
    {
      cudaGraph_t g;
      check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
      empty_kernel<<<1, 32, 0, stream>>>();
      check(cudaStreamEndCapture(stream, &g), "end capture");
      census_report("capture");
      cudaGraphExec_t e;
      check(cudaGraphInstantiate(&e, g, 0), "instantiate");
      std::printf("exec %p graph %p\n", static_cast<void*>(e), static_cast<void*>(g));
      census_report("instantiate");
      check(cudaGraphLaunch(e, stream), "launch");
      census_report("launch 1");
      check(cudaGraphLaunch(e, stream), "launch");
      census_report("launch 2");
      check(cudaStreamSynchronize(stream), "sync");
      census_report("sync");
      check(cudaGraphExecDestroy(e), "exec destroy");
      census_report("exec destroy");
      check(cudaGraphDestroy(g), "graph destroy");
      census_report("graph destroy");
    }
    g_census = false;
    return 0;
  }
  unsigned* d_ids;
  check(cudaMalloc(&d_ids, kBlocks * sizeof(unsigned)), "malloc");
  std::vector<unsigned> ids(kBlocks);
  cudaGraph_t graph;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
  record_smid<<<kBlocks, 64, 0, stream>>>(d_ids);
  check(cudaStreamEndCapture(stream, &graph), "end capture");
  std::printf("-- instantiate\n");
  cudaGraphExec_t exec;
  check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  std::printf("   exec handle %p\n", static_cast<void*>(exec));
  g_watched_exec = reinterpret_cast<CUgraphExec>(exec);
  size_t count = 1;
  cudaGraphNode_t node;
  check(cudaGraphGetNodes(graph, &node, &count), "nodes");
  g_watched_node = reinterpret_cast<CUgraphNode>(node);
  std::printf("-- launches\n");
  g_which = 0;
  replay(exec, stream, d_ids, ids, "first launch (uploads)");
  replay(exec, stream, d_ids, ids, "second launch");
  flip_mask();
  replay(exec, stream, d_ids, ids, "plain replay after the flip (expect old)");
  g_toggle_on_enter = true;
  replay(exec, stream, d_ids, ids, "launch that toggles in its enter callback");
  replay(exec, stream, d_ids, ids, "next launch");
  flip_mask();
  g_toggle_on_enter = true;
  replay(exec, stream, d_ids, ids, "flip back + toggle in callback");
  std::printf("exec pointer index in params: %d; api callbacks so far %llu\n", g_exec_index,
              static_cast<unsigned long long>(g_calls));

  // What the API callback costs per launch: an empty-kernel graph, launched 20000 times, with the
  // launch cbids enabled and disabled (same process, interleaved rounds).
  cudaGraph_t tiny;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "tiny capture");
  empty_kernel<<<1, 32, 0, stream>>>();
  check(cudaStreamEndCapture(stream, &tiny), "tiny end");
  cudaGraphExec_t tiny_exec;
  check(cudaGraphInstantiate(&tiny_exec, tiny, 0), "tiny instantiate");
  g_dumps_left = 0;
  for (int round = 0; round < 3; ++round) {
    for (int on = 1; on >= 0; --on) {
      enable(static_cast<uint32_t>(on), handle, 6, 514);
      enable(static_cast<uint32_t>(on), handle, 6, 515);
      check(cudaStreamSynchronize(stream), "sync");
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 20000; ++i) check(cudaGraphLaunch(tiny_exec, stream), "tiny launch");
      const double host = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      check(cudaStreamSynchronize(stream), "sync");
      std::printf("tiny graph launch, api callback %s: %.0f ns host per launch\n", on ? "on " : "off", host / 20000);
    }
  }
  // After the application destroys the graph an exec came from, can the shim still reach the exec's
  // kernel nodes? V1: swap cuGraphDestroy's argument for a dummy (is the argument used after the enter
  // callback?). V2: toggle with the node handle of a really destroyed graph. V3: update the exec from
  // two clones (grid changed, then the original) instead of toggling.
  {
    using get_nodes_fn = CUresult (*)(CUgraph, CUgraphNode*, size_t*);
    using create_fn = CUresult (*)(CUgraph*, unsigned);
    using add_empty_fn = CUresult (*)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t);
    using clone_fn = CUresult (*)(CUgraph*, CUgraph);
    using kget_fn = CUresult (*)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*);
    using kset_fn = CUresult (*)(CUgraphNode, const CUDA_KERNEL_NODE_PARAMS*);
    using update_fn = CUresult (*)(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo*);
    auto get_nodes = reinterpret_cast<get_nodes_fn>(dlsym(libcuda, "cuGraphGetNodes"));
    auto create = reinterpret_cast<create_fn>(dlsym(libcuda, "cuGraphCreate"));
    auto add_empty = reinterpret_cast<add_empty_fn>(dlsym(libcuda, "cuGraphAddEmptyNode"));
    auto clone = reinterpret_cast<clone_fn>(dlsym(libcuda, "cuGraphClone"));
    auto kget = reinterpret_cast<kget_fn>(dlsym(libcuda, "cuGraphKernelNodeGetParams_v2"));
    auto kset = reinterpret_cast<kset_fn>(dlsym(libcuda, "cuGraphKernelNodeSetParams_v2"));
    auto update = reinterpret_cast<update_fn>(dlsym(libcuda, "cuGraphExecUpdate_v2"));
    enable(1, handle, 6, 514);
    enable(1, handle, 6, 517);
    g_dumps_left = 0;
    auto make = [&](CUgraph* g, cudaGraphExec_t* e, CUgraphNode* node_out) {
      cudaGraph_t graph_rt;
      check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture v");
      record_smid<<<kBlocks, 64, 0, stream>>>(d_ids);
      check(cudaStreamEndCapture(stream, &graph_rt), "end capture v");
      check(cudaGraphInstantiate(e, graph_rt, 0), "instantiate v");
      *g = reinterpret_cast<CUgraph>(graph_rt);
      size_t n = 1;
      get_nodes(*g, node_out, &n);
    };
    // V1
    CUgraph g1;
    cudaGraphExec_t e1;
    CUgraphNode n1;
    make(&g1, &e1, &n1);
    replay(e1, stream, d_ids, ids, "V1 first launch");
    CUgraph dummy;
    create(&dummy, 0);
    CUgraphNode dummy_node;
    add_empty(&dummy_node, dummy, nullptr, 0);
    g_swap_to = dummy;
    g_swap_from = g1;
    std::printf("V1 cudaGraphDestroy(g1) -> %s\n", cudaGetErrorString(cudaGraphDestroy(reinterpret_cast<cudaGraph_t>(g1))));
    size_t count_dummy = 0;
    const CUresult rd = get_nodes(dummy, nullptr, &count_dummy);
    CUgraphNode extra;
    const CUresult ra = add_empty(&extra, g1, nullptr, 0);
    size_t count_g1 = 0;
    const CUresult rg = get_nodes(g1, nullptr, &count_g1);
    std::printf("V1 after destroy: dummy nodes -> %d count %zu (1 if the dummy lives); add to g1 -> %d; g1 nodes -> %d count %zu (2 if g1 lives)\n",
                rd, count_dummy, ra, rg, count_g1);
    flip_mask();
    g_watched_exec = reinterpret_cast<CUgraphExec>(e1);
    g_watched_node = n1;
    g_toggle_on_enter = true;
    replay(e1, stream, d_ids, ids, "V1 flip + toggle in callback");
    g_toggle_on_enter = false;
    // V2
    CUgraph g2;
    cudaGraphExec_t e2;
    CUgraphNode n2;
    make(&g2, &e2, &n2);
    replay(e2, stream, d_ids, ids, "V2 first launch");
    check(cudaGraphDestroy(reinterpret_cast<cudaGraph_t>(g2)), "V2 destroy");
    flip_mask();
    const CUresult off = g_set_enabled(reinterpret_cast<CUgraphExec>(e2), n2, 0);
    const CUresult on = g_set_enabled(reinterpret_cast<CUgraphExec>(e2), n2, 1);
    std::printf("V2 toggle with a destroyed graph's node -> %d %d\n", off, on);
    replay(e2, stream, d_ids, ids, "V2 after that toggle");
    // V3
    CUgraph g3;
    cudaGraphExec_t e3;
    CUgraphNode n3;
    make(&g3, &e3, &n3);
    replay(e3, stream, d_ids, ids, "V3 first launch");
    CUgraph same, changed;
    clone(&same, g3);
    clone(&changed, g3);
    size_t one = 1;
    CUgraphNode changed_node;
    get_nodes(changed, &changed_node, &one);
    CUDA_KERNEL_NODE_PARAMS kp{};
    std::printf("V3 get params -> %d\n", kget(changed_node, &kp));
    kp.gridDimX -= 1;
    std::printf("V3 set changed grid -> %d\n", kset(changed_node, &kp));
    check(cudaGraphDestroy(reinterpret_cast<cudaGraph_t>(g3)), "V3 destroy");
    flip_mask();
    CUgraphExecUpdateResultInfo info{};
    const CUresult u1 = update(reinterpret_cast<CUgraphExec>(e3), changed, &info);
    const CUresult u2 = update(reinterpret_cast<CUgraphExec>(e3), same, &info);
    std::printf("V3 exec update from the changed clone -> %d, from the same clone -> %d\n", u1, u2);
    replay(e3, stream, d_ids, ids, "V3 after the two updates");
  }
  std::printf("-- destroy\n");
  g_dumps_left = 4;
  enable(1, handle, 6, 514);
  check(cudaGraphExecDestroy(exec), "exec destroy");
  check(cudaGraphDestroy(graph), "graph destroy");
  std::printf("done\n");
  return 0;
}
