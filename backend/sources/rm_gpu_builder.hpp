#pragma once
// Turns what the RM controls said (RmFacts) into the gpupart model: physical GPCs as floorplan rows,
// each TPC in its physical slot with its SMs from the global SM order (floorswept slots stay empty),
// engines with runlists, channel groups, copy-engine wiring, MIG mode, processes. A pure function,
// tested from the recorded H100 replies. What the controls cannot tell stays unknown with the reason;
// launch-mask bits in particular are the probe's to give.
#include "model/gpu.hpp"
#include "sources/rm_facts.hpp"

namespace gpupart {

inline constexpr const char* kMaskBitsNeedProbe =
    "run `gpupart probe`: the driver's RM controls know TPCs by GPC and slot, not by launch-mask bit";

// Adds the RM facts to `gpu`, which may already hold other sources' facts (its index, PCI bus id).
// `own_pid`: gpupart's own process, which has the GPU open while it reads and is left out of processes.
void add_rm_facts(const RmFacts& facts, int own_pid, Gpu& gpu);

}  // namespace gpupart
