#pragma once
// The two ways a TPC is named, and the map between them on one GPU.
// - Its NUMBER, the driver's own dense numbering: TPC k holds SMs 2k and 2k+1 (as %smid, Nsight and libsmctrl
//   count them), 0 to N-1 with no gaps. Every mask a person or a script sees (TpcMask everywhere in gpupart)
//   is a set of TPC numbers.
// - Its launch-descriptor mask BIT: where the TPC sits in the 64/128-bit mask of a kernel's launch descriptor,
//   with holes for floorswept TPCs (0-83 with 18 holes on an H100 or H200). Only what writes descriptors (the
//   shim, through the registry's slots and its start environment) and the probe speak bits.
// The driver itself translates numbers into bits when it applies a stream's mask; gpupart translates through
// the GPU's map (each TPC's SMs and mask bit), so the two agree wherever the map is known.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "model/gpu.hpp"

namespace gpupart {

// TPC k when the TPC's SMs are exactly 2k and 2k+1; nullopt when its SMs are not known or not such a pair.
std::optional<int> tpc_number(const Tpc& tpc);

class TpcNumbering {
public:
    // The map of `gpu`: every TPC's number and mask bit known. Throws UserError saying what is missing.
    static TpcNumbering of(const Gpu& gpu);
    // nullopt (with the reason in `why`, when given) instead of throwing.
    static std::optional<TpcNumbering> try_of(const Gpu& gpu, std::string* why = nullptr);

    // Numbers to descriptor bits. Numbers with no TPC are dropped (callers check them first).
    TpcMask to_bits(const TpcMask& numbers) const;
    // Descriptor bits to numbers. Bits with no TPC (holes) are dropped; `unknown` gets them when given.
    TpcMask to_numbers(const TpcMask& bits, TpcMask* unknown = nullptr) const;
    std::optional<int> bit_of(int number) const;
    std::optional<int> number_of(int bit) const;
    int tpc_count() const { return count_; }
    bool operator==(const TpcNumbering&) const = default;

private:
    std::array<std::int16_t, TpcMask::kWidth> bit_of_{};     // -1: no such TPC
    std::array<std::int16_t, TpcMask::kWidth> number_of_{};  // -1: a hole
    int count_ = 0;
};

// `numbers` as the descriptor bits the shim writes on `gpu`, in hex ("0x..."): the form of its start
// environment (GPUPART_TPCS, GPUPART_REAL_TPCS) and of a demo worker's arguments. Throws UserError when the
// GPU's map is not known.
std::string descriptor_hex(const Gpu& gpu, const TpcMask& numbers);

}  // namespace gpupart
