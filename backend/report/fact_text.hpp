#pragma once
// How every text report prints a fact and where it came from: the value, or the reason it is not
// known ("needs root"), never a made-up 0.
#include <string>

#include <fmt/format.h>

#include "model/provenance.hpp"

namespace gpupart {

template <typename T>
std::string fact_text(const Fact<T>& fact) {
    if (fact.known()) return fmt::format("{}", *fact.value);
    return fact.unknown_reason.empty() ? "unknown" : fact.unknown_reason;
}

inline std::string provenance_text(const Provenance& from) {
    return from.detail.empty() ? std::string(to_string(from.source))
                               : fmt::format("{}: {}", to_string(from.source), from.detail);
}

}  // namespace gpupart
