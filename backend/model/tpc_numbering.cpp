#include "model/tpc_numbering.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"

namespace gpupart {

std::optional<int> tpc_number(const Tpc& tpc) {
    if (tpc.sms.size() != 2) return std::nullopt;
    const int low = std::min(tpc.sms[0], tpc.sms[1]);
    const int high = std::max(tpc.sms[0], tpc.sms[1]);
    if (low < 0 || low % 2 != 0 || high != low + 1 || low / 2 >= TpcMask::kWidth) return std::nullopt;
    return low / 2;
}

std::optional<TpcNumbering> TpcNumbering::try_of(const Gpu& gpu, std::string* why) {
    const auto fail = [&](std::string reason) -> std::optional<TpcNumbering> {
        if (why) *why = std::move(reason);
        return std::nullopt;
    };
    if (!mask_bits_known(gpu)) return fail(mask_bits_unknown_reason(gpu));
    TpcNumbering map;
    map.bit_of_.fill(-1);
    map.number_of_.fill(-1);
    for (const Tpc& tpc : gpu.tpcs) {
        const std::optional<int> number = tpc_number(tpc);
        if (!number)
            return fail(fmt::format("the TPC at mask bit {} has SMs {} where its number needs two SMs 2k and 2k+1", *tpc.mask_bit,
                                    fmt::join(tpc.sms, ",")));
        if (map.bit_of_[static_cast<std::size_t>(*number)] != -1) return fail(fmt::format("two TPCs are number {}", *number));
        map.bit_of_[static_cast<std::size_t>(*number)] = static_cast<std::int16_t>(*tpc.mask_bit);
        map.number_of_[static_cast<std::size_t>(*tpc.mask_bit)] = static_cast<std::int16_t>(*number);
        ++map.count_;
    }
    // Numbers are dense: the driver numbers every TPC of the GPU 0 to N-1.
    for (int k = 0; k < map.count_; ++k)
        if (map.bit_of_[static_cast<std::size_t>(k)] == -1)
            return fail(fmt::format("no TPC holds SMs {} and {}, so the TPCs' SMs do not number them 0-{}", 2 * k, 2 * k + 1,
                                    map.count_ - 1));
    return map;
}

TpcNumbering TpcNumbering::of(const Gpu& gpu) {
    std::string why;
    auto map = try_of(gpu, &why);
    if (!map) throw UserError(fmt::format("{}: TPC numbers cannot be matched to launch-descriptor bits: {}", gpu_display_name(gpu), why));
    return *map;
}

TpcMask TpcNumbering::to_bits(const TpcMask& numbers) const {
    TpcMask bits;
    for (int number : numbers.bits())
        if (const auto bit = bit_of(number)) bits.set(*bit);
    return bits;
}

TpcMask TpcNumbering::to_numbers(const TpcMask& bits, TpcMask* unknown) const {
    TpcMask numbers;
    for (int bit : bits.bits()) {
        if (const auto number = number_of(bit))
            numbers.set(*number);
        else if (unknown)
            unknown->set(bit);
    }
    return numbers;
}

std::optional<int> TpcNumbering::bit_of(int number) const {
    if (number < 0 || number >= TpcMask::kWidth || bit_of_[static_cast<std::size_t>(number)] < 0) return std::nullopt;
    return bit_of_[static_cast<std::size_t>(number)];
}

std::optional<int> TpcNumbering::number_of(int bit) const {
    if (bit < 0 || bit >= TpcMask::kWidth || number_of_[static_cast<std::size_t>(bit)] < 0) return std::nullopt;
    return number_of_[static_cast<std::size_t>(bit)];
}

std::string descriptor_hex(const Gpu& gpu, const TpcMask& numbers) { return TpcNumbering::of(gpu).to_bits(numbers).to_hex(); }

}  // namespace gpupart
