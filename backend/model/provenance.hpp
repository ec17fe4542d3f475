#pragma once
// Where a fact came from. Every value the model holds carries one, so every front end can say
// "this TPC map was measured by the probe" or "runlist ids need root".
#include <optional>
#include <string>
#include <string_view>

namespace gpupart {

enum class Source {
    recorded,  // a recorded measurement shipped with gpupart (built-in snapshot, fixture)
    literature,// a table or figure of a published paper (seed papers), not measured by us
    probe,     // gpupart-probe: CUDA kernels launched with one mask bit at a time
    rmctrl,    // the driver's resource-manager controls on /dev/nvidiactl
    nvdebug,   // the nvdebug kernel module's /proc/gpuN files
    mmio,      // direct BAR0 register reads
    nvml,      // libnvidia-ml
    udev,      // libudev / sysfs device enumeration
    registry,  // gpupart's own shared-memory registry
    inferred,  // derived by gpupart from other facts (the detail says from which)
};

std::string_view to_string(Source source);
std::optional<Source> source_from_string(std::string_view text);

struct Provenance {
    Source source = Source::recorded;
    std::string detail;  // e.g. "tests/fixtures/h200/2026-11-22-maskbits.log"

    bool operator==(const Provenance&) const = default;
};

// A value with its provenance. An empty value means "not known", and `unknown_reason` then says why
// ("needs root", "not available on this GPU"), so a front end prints the reason, never a bogus 0.
template <typename T>
struct Fact {
    std::optional<T> value;
    Provenance from;
    std::string unknown_reason;

    bool known() const { return value.has_value(); }
    bool operator==(const Fact&) const = default;
};

template <typename T>
Fact<T> known_fact(T value, Provenance from) {
    return Fact<T>{std::move(value), std::move(from), {}};
}

template <typename T>
Fact<T> unknown_fact(std::string reason, Provenance from) {
    return Fact<T>{std::nullopt, std::move(from), std::move(reason)};
}

}  // namespace gpupart
