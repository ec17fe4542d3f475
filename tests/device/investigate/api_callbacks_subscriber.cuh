// The tools-callback subscriber of api_callbacks.cu (an investigation, not a regression test): the
// driver's tools-callback table as backend/shim/gpupart_shim.c finds it, the launch-descriptor mask write
// of domain 0xb (as the shim does it, V04_00 only), and the driver-API callback (domain 6 and the others)
// that dumps params, counts (domain, cbid) pairs for a census, swaps cuGraphDestroy's argument and toggles
// the watched exec's node from inside cuGraphLaunch's enter callback. main() sets the state below.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sys/uio.h>
#include <unistd.h>

#define CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch 514  // CUPTI public cupti_driver_cbid.h (CUDA 13.0)

namespace api_callbacks {

// Masks A and B (GPC_A_HEX, GPC_B_HEX: the TPCs each allows), the one written now, and the descriptor
// callbacks so far.
inline uint32_t g_masks[2][4];
inline uint32_t g_real[4];
inline int g_which = 0;

inline uint64_t g_descriptor_callbacks = 0;

inline void flip_mask() { g_which = 1 - g_which; }

// The shim's descriptor write (backend/shim/gpupart_shim.c), for V04_00 only: this is an investigation.
inline void write_mask(void* params) {
  ++g_descriptor_callbacks;
  uint8_t* desc = static_cast<uint8_t**>(params)[4];
  if (desc[72] != 0x40) return;
  uint32_t disable[4];
  for (int i = 0; i < 4; ++i) disable[i] = ~g_masks[g_which][i];
  std::memcpy(desc + 304, disable, sizeof disable);
  uint32_t first;
  std::memcpy(&first, desc, 4);
  first |= 0x80000000u;
  std::memcpy(desc, &first, 4);
}

inline bool readable(const void* p, size_t n) {
  char buffer[64];
  iovec local{buffer, n < sizeof buffer ? n : sizeof buffer};
  iovec remote{const_cast<void*>(p), local.iov_len};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(local.iov_len);
}

// ---- The tools-callback table (as backend/shim/gpupart_shim.c finds it) ---------------------------------------
inline const unsigned char kTableId[16] = {0x2c, 0x8e, 0x0a, 0xd8, 0x07, 0x10, 0xab, 0x4e,
                                    0x90, 0xdd, 0x54, 0x71, 0x9f, 0xe5, 0xf7, 0x4b};
using callback_fn = void (*)(void*, int, int, const void*);
using subscribe_fn = int (*)(uint32_t*, callback_fn, void*);
using enable_fn = int (*)(uint32_t, uint32_t, int, int);
using set_enabled_fn = CUresult (*)(CUgraphExec, CUgraphNode, unsigned);

inline CUgraphExec g_watched_exec = nullptr;
inline CUgraphNode g_watched_node = nullptr;
inline bool g_toggle_on_enter = false;
inline set_enabled_fn g_set_enabled = nullptr;
inline int g_dumps_left = 12;
inline int g_exec_index = -1;  // which params pointer leads to the exec handle
inline uint64_t g_calls = 0;
inline bool g_census = false;
inline unsigned g_count[32][1024];
inline const void* g_first[32][1024];
inline uint64_t g_first_words[32][1024][8];

// Which (domain, cbid) pairs fired since the last census, with the first params' words.
inline void census_report(const char* what) {
  std::printf("census %s:\n", what);
  for (int d = 0; d < 32; ++d)
    for (int c = 0; c < 1024; ++c)
      if (g_count[d][c] != 0) {
        std::printf("  domain %d cbid %d x%u:", d, c, g_count[d][c]);
        for (int i = 0; i < 8; ++i) std::printf(" %llx", static_cast<unsigned long long>(g_first_words[d][c][i]));
        std::printf("\n");
      }
  std::memset(g_count, 0, sizeof g_count);
  std::memset(g_first, 0, sizeof g_first);
}

inline void dump(int domain, int cbid, const void* params) {
  const uint64_t* q = static_cast<const uint64_t*>(params);
  std::printf("cb domain %d cbid %d params %p:", domain, cbid, params);
  for (int i = 0; i < 13; ++i) std::printf(" [%d]=%llx", i, static_cast<unsigned long long>(q[i]));
  std::printf("\n");
  for (int i = 0; i < 10; ++i) {
    const void* p = reinterpret_cast<const void*>(q[i]);
    if (q[i] < 0x10000 || q[i] > 0x7fffffffffffULL || !readable(p, 48)) continue;
    const char* s = static_cast<const char*>(p);
    bool text = true;
    for (int k = 0; k < 6; ++k) text = text && s[k] >= 0x20 && s[k] < 0x7f;
    if (text) std::printf("    [%d] -> \"%.48s\"\n", i, s);
    const uint64_t* inner = static_cast<const uint64_t*>(p);
    std::printf("    [%d] -> %llx %llx %llx\n", i, static_cast<unsigned long long>(inner[0]),
                static_cast<unsigned long long>(inner[1]), static_cast<unsigned long long>(inner[2]));
    if (g_watched_exec != nullptr && inner[0] == reinterpret_cast<uint64_t>(g_watched_exec)) {
      std::printf("    [%d] -> points at the watched exec\n", i);
      g_exec_index = i;
    }
  }
}

inline CUgraph g_swap_from = nullptr;  // cuGraphDestroy of this graph gets g_swap_to instead
inline CUgraph g_swap_to = nullptr;

inline void on_api(void*, int domain, int cbid, const void* params) {
  if (domain == 6 && cbid == 517 && g_swap_from != nullptr) {
    CUgraph* target = reinterpret_cast<CUgraph*>(static_cast<const uint64_t*>(params)[7]);
    if (*target == g_swap_from) {
      *target = g_swap_to;
      std::printf("  cuGraphDestroy enter: swapped the graph argument for a dummy\n");
      g_swap_from = nullptr;
    }
    return;
  }
  if (domain == 0xb) {
    if (cbid == 1) write_mask(const_cast<void*>(params));
    return;
  }
  ++g_calls;
  if (g_census && domain >= 0 && domain < 32 && cbid >= 0 && cbid < 1024) {
    ++g_count[domain][cbid];
    if (g_first[domain][cbid] == nullptr) {
      g_first[domain][cbid] = params;
      std::memcpy(g_first_words[domain][cbid], params, sizeof g_first_words[0][0]);
    }
    return;
  }
  if (g_dumps_left > 0) {
    --g_dumps_left;
    dump(domain, cbid, params);
  }
  if (!g_toggle_on_enter || (cbid != CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch && cbid != 515)) return;
  const uint64_t* q = static_cast<const uint64_t*>(params);
  const uint32_t site = static_cast<uint32_t>(q[0]);
  if (g_exec_index < 0) return;
  const uint64_t* fp = reinterpret_cast<const uint64_t*>(q[g_exec_index]);
  if (fp[0] != reinterpret_cast<uint64_t>(g_watched_exec)) return;
  std::printf("  launch callback site word %u: toggling the node inside the callback\n", site);
  const CUresult off = g_set_enabled(g_watched_exec, g_watched_node, 0);
  const CUresult on = g_set_enabled(g_watched_exec, g_watched_node, 1);
  std::printf("  toggle -> %d %d\n", off, on);
  g_toggle_on_enter = false;
}

}  // namespace api_callbacks
