#include "model/tpc_mask.hpp"

#include <bit>
#include <stdexcept>

#include <fmt/format.h>

namespace gpupart {

TpcMask TpcMask::range(int first, int last) {
    if (first < 0 || last >= kWidth || first > last)
        throw std::out_of_range(fmt::format("TPC bit range {}-{} outside 0-{}", first, last, kWidth - 1));
    TpcMask mask;
    for (int bit = first; bit <= last; ++bit) mask.set(bit);
    return mask;
}

void TpcMask::set(int bit, bool on) {
    if (bit < 0 || bit >= kWidth) throw std::out_of_range(fmt::format("TPC bit {} outside 0-{}", bit, kWidth - 1));
    const std::uint64_t one = std::uint64_t{1} << (bit % 64);
    if (on)
        words_[static_cast<std::size_t>(bit / 64)] |= one;
    else
        words_[static_cast<std::size_t>(bit / 64)] &= ~one;
}

bool TpcMask::test(int bit) const {
    if (bit < 0 || bit >= kWidth) return false;
    return (words_[static_cast<std::size_t>(bit / 64)] >> (bit % 64)) & 1U;
}

int TpcMask::count() const { return std::popcount(words_[0]) + std::popcount(words_[1]); }

std::vector<int> TpcMask::bits() const {
    std::vector<int> out;
    out.reserve(static_cast<std::size_t>(count()));
    for (int bit = 0; bit < kWidth; ++bit)
        if (test(bit)) out.push_back(bit);
    return out;
}

std::array<std::uint32_t, 4> TpcMask::words32() const {
    return {static_cast<std::uint32_t>(words_[0]), static_cast<std::uint32_t>(words_[0] >> 32),
            static_cast<std::uint32_t>(words_[1]), static_cast<std::uint32_t>(words_[1] >> 32)};
}

TpcMask TpcMask::operator|(const TpcMask& other) const { return from_words(words_[0] | other.words_[0], words_[1] | other.words_[1]); }
TpcMask TpcMask::operator&(const TpcMask& other) const { return from_words(words_[0] & other.words_[0], words_[1] & other.words_[1]); }
TpcMask TpcMask::operator~() const { return from_words(~words_[0], ~words_[1]); }
TpcMask& TpcMask::operator|=(const TpcMask& other) { return *this = *this | other; }
TpcMask& TpcMask::operator&=(const TpcMask& other) { return *this = *this & other; }

std::string TpcMask::to_list() const {
    std::string out;
    int bit = 0;
    while (bit < kWidth) {
        if (!test(bit)) {
            ++bit;
            continue;
        }
        int last = bit;
        while (last + 1 < kWidth && test(last + 1)) ++last;
        if (!out.empty()) out += ',';
        out += last == bit ? fmt::format("{}", bit) : fmt::format("{}-{}", bit, last);
        bit = last + 1;
    }
    return out;
}

std::string TpcMask::to_hex() const {
    if (words_[1] != 0) return fmt::format("0x{:x}{:016x}", words_[1], words_[0]);
    return fmt::format("0x{:x}", words_[0]);
}

std::string TpcMask::to_hex_padded() const { return fmt::format("0x{:016x}{:016x}", words_[1], words_[0]); }

std::optional<TpcMask> TpcMask::parse_hex(std::string_view text) {
    if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return std::nullopt;
    TpcMask mask;
    int digits = 0;
    bool last_was_digit = false;
    for (std::size_t i = 2; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '_' && last_was_digit && i + 1 < text.size()) {
            last_was_digit = false;
            continue;
        }
        int value = -1;
        if (c >= '0' && c <= '9') value = c - '0';
        if (c >= 'a' && c <= 'f') value = c - 'a' + 10;
        if (c >= 'A' && c <= 'F') value = c - 'A' + 10;
        if (value < 0) return std::nullopt;
        // Shift the whole 128-bit value left by one hex digit, refusing digits that would fall off the top.
        if ((mask.words_[1] >> 60) != 0) return std::nullopt;
        mask.words_[1] = (mask.words_[1] << 4) | (mask.words_[0] >> 60);
        mask.words_[0] = (mask.words_[0] << 4) | static_cast<std::uint64_t>(value);
        ++digits;
        last_was_digit = true;
    }
    if (digits == 0) return std::nullopt;
    return mask;
}

}  // namespace gpupart
