#pragma once
// How every view words a fact and its provenance, so the engines tree, the copy-engine graph and
// their tooltips say "needs root" or "recorded: tests/fixtures/..." the same way the CLI does.
#include <string>
#include <type_traits>

#include <QString>

#include "model/provenance.hpp"

namespace gpupart::widgets {

// "recorded: tests/fixtures/h100-rmctrl/replies-root.txt", or just "probe" when there is no detail.
QString provenance_text(const Provenance& from);

// The value, or the reason it is unknown ("needs root"), never a made-up 0.
template <typename T>
QString fact_text(const Fact<T>& fact) {
    if (fact.known()) {
        if constexpr (std::is_same_v<T, std::string>) return QString::fromStdString(*fact.value);
        else return QString::number(*fact.value);
    }
    return fact.unknown_reason.empty() ? QStringLiteral("unknown") : QString::fromStdString(fact.unknown_reason);
}

}  // namespace gpupart::widgets
