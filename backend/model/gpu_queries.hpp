#pragma once
// Questions front ends ask of a Gpu model: which bits are real TPCs, which GPC a mask covers, and
// whether a model is consistent at all (used when loading a snapshot, so nothing broken gets in).
#include <optional>
#include <string>
#include <vector>

#include "model/gpu.hpp"

namespace gpupart {

std::string gpc_name(int gpc_index);  // "gpc3"
std::string gpu_display_name(const Gpu& gpu);  // "NVIDIA H200" or "GPU 0" when the name is unknown

// Masks here are TPC numbers (tpc_numbering.hpp: TPC k = SMs 2k and 2k+1), never descriptor bits.
TpcMask real_tpcs(const Gpu& gpu);  // every TPC whose number is known
// The name the registry keeps this GPU's masks under: its UUID ("GPU-..."), or, for a snapshot GPU whose
// UUID was not recorded (the built-in demo snapshots), "GPU-00000000-0000-0000-0000-0000000000NN" with NN
// its index + 1 (no driver gives out such a UUID, so only simulated processes are ever on it).
std::string gpu_key(const Gpu& gpu);
// Every TPC's mask bit is known (a probe ran, or a recording says), so masks can be built on this GPU.
bool mask_bits_known(const Gpu& gpu);
std::string mask_bits_unknown_reason(const Gpu& gpu);  // empty when known
TpcMask hole_bits(const Gpu& gpu);  // descriptor bits with no TPC
TpcMask gpc_tpcs(const Gpu& gpu, int gpc_index);
TpcMask undetermined_gpc_tpcs(const Gpu& gpu);
const Tpc* find_tpc(const Gpu& gpu, int number);
const Tpc* find_tpc_by_bit(const Gpu& gpu, int mask_bit);

std::vector<int> sms_of(const Gpu& gpu, const TpcMask& mask);
int sm_total(const Gpu& gpu);  // SMs of every TPC, mask bit known or not
// GPCs whose every real TPC is in `mask` (a GPC with no real TPC never counts).
std::vector<int> gpcs_fully_covered(const Gpu& gpu, const TpcMask& mask);

// Structural checks: bits inside the mask width and not both TPC and hole, GPC indices and slots
// valid and unique, SM ids unique. Returns the first problem as "<field>: <what is wrong>".
std::optional<std::string> find_inconsistency(const Gpu& gpu);

}  // namespace gpupart
