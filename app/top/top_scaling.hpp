#pragma once
// Each process's measured scaling in gpupart top's table: the class and speedup of the curve
// `gpupart measure` saved for its command line and user on this GPU ("compute 1.53x": from half the TPCs
// to all of them), "-" for a process never measured. The store is the one measure, plan and the app's
// Scaling panel use (curve_store_path.hpp); it is read at most every few seconds, not every frame.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "curve_store/curve_store.hpp"
#include "top/top_data.hpp"

namespace gpupart::top {

// "compute 1.53x" / "memory 1.08x" (the measured speedup from half the TPCs to all), or "" when the
// curve's points cannot be fitted.
std::string scaling_text(const StoredCurve& curve);

class ScalingClasses {
public:
    // `dir`: the curve store; empty: the default one (no HOME: no curves, nothing shown).
    explicit ScalingClasses(std::string dir = {});
    // Sets each process's `scaling` from the store, read again when `reread` has passed since the last read.
    void add_to(TopData& data, const std::string& gpu_key, std::chrono::steady_clock::time_point now);
    static constexpr std::chrono::seconds reread{5};

private:
    std::string dir_;
    std::optional<std::chrono::steady_clock::time_point> read_at_;
    std::map<std::tuple<std::string, std::string, std::string>, std::string> text_;  // (command, user, gpu) -> text
};

}  // namespace gpupart::top
