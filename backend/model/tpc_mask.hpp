#pragma once
// A set of TPCs, 128 wide. Everywhere a person or a script sees it, bit k is TPC number k, the driver's own
// dense numbering (TPC k = SMs 2k and 2k+1: tpc_numbering.hpp). The same type carries launch-descriptor
// mask bits only at the edges that write descriptors (registry slots, the shim's start environment, the
// probe), where TpcNumbering translates. A set bit means "the process may run on this TPC" (like taskset's
// CPU affinity); the shim turns it into the descriptor's disable mask.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpupart {

class TpcMask {
public:
    static constexpr int kWidth = 128;

    constexpr TpcMask() = default;
    static constexpr TpcMask from_words(std::uint64_t low, std::uint64_t high) {
        TpcMask mask;
        mask.words_ = {low, high};
        return mask;
    }
    // Bits first..last inclusive; both must lie in [0, kWidth).
    static TpcMask range(int first, int last);

    void set(int bit, bool on = true);
    bool test(int bit) const;
    int count() const;
    bool empty() const { return words_[0] == 0 && words_[1] == 0; }
    std::vector<int> bits() const;
    std::uint64_t low_word() const { return words_[0]; }
    std::uint64_t high_word() const { return words_[1]; }
    // The four 32-bit words in descriptor order (lowest bits first).
    std::array<std::uint32_t, 4> words32() const;

    TpcMask operator|(const TpcMask& other) const;
    TpcMask operator&(const TpcMask& other) const;
    TpcMask operator~() const;
    TpcMask& operator|=(const TpcMask& other);
    TpcMask& operator&=(const TpcMask& other);
    bool operator==(const TpcMask&) const = default;

    // "0-3,9-16,75"; "" for the empty mask.
    std::string to_list() const;
    // "0xf00ff"; "0x0" for the empty mask. Lowest bit is bit 0.
    std::string to_hex() const;
    // Exactly 32 hex digits, for stable machine-readable output.
    std::string to_hex_padded() const;

    // Parses the hex form written by to_hex / to_hex_padded ("0x" then 1..32 hex digits, '_' allowed
    // between digits). Returns nullopt on anything else.
    static std::optional<TpcMask> parse_hex(std::string_view text);

private:
    std::array<std::uint64_t, 2> words_{0, 0};
};

}  // namespace gpupart
