#pragma once
// The mask expressions users type: "0-3,9-16", "0xff00ff", "gpc2", "gpc0-1,33", "all",
// "8 tpcs", "2 gpcs", "25%". Numbers are TPC numbers (TPC k = SMs 2k and 2k+1, the driver's numbering),
// hex masks too; "bits:0x..." names launch-descriptor mask bits instead, for experts. Parsing is syntax
// only; mask_resolve.hpp turns an expression into TPC numbers against one GPU's topology (where GPC
// names, counts and descriptor bits get their meaning).
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/tpc_mask.hpp"

namespace gpupart {

struct BitRange {  // "5" or "5-9": TPC numbers
    int first = 0;
    int last = 0;
    bool operator==(const BitRange&) const = default;
};
struct GpcRange {  // "gpc2" or "gpc2-3"
    int first = 0;
    int last = 0;
    bool operator==(const GpcRange&) const = default;
};
struct HexBits {  // "0xff00": TPC numbers
    TpcMask mask;
    bool operator==(const HexBits&) const = default;
};
struct DescriptorBits {  // "bits:0x3c0f": launch-descriptor mask bits (holes included)
    TpcMask bits;
    bool operator==(const DescriptorBits&) const = default;
};
using MaskTerm = std::variant<BitRange, GpcRange, HexBits, DescriptorBits>;

struct AllTpcs {
    bool operator==(const AllTpcs&) const = default;
};
struct TpcCount {  // "8 tpcs"
    int count = 0;
    bool operator==(const TpcCount&) const = default;
};
struct GpcCount {  // "2 gpcs"
    int count = 0;
    bool operator==(const GpcCount&) const = default;
};
struct SharePercent {  // "25%"
    double percent = 0;
    bool operator==(const SharePercent&) const = default;
};

struct MaskExpression {
    std::string text;  // as the user wrote it
    std::variant<std::vector<MaskTerm>, AllTpcs, TpcCount, GpcCount, SharePercent> value;

    bool is_explicit() const { return std::holds_alternative<std::vector<MaskTerm>>(value); }
};

// Throws UserError naming the expression and the offending part.
MaskExpression parse_mask_expression(std::string_view text);

}  // namespace gpupart
