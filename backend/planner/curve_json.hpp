#pragma once
// A measured curve as saved for later plans, and its JSON text. Bytes in, bytes out: reading and
// writing files is curve_store's job (a layer that may use platform's safe file helpers), so this one
// depends on the model alone.
//
// The file holds the measured points and what they were measured on; the fit and the class are written
// too, for a person reading the file, but never read back: a reader fits the points again (fit_curve),
// so a file edited by hand cannot claim a fit its points do not have.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/scaling_curve.hpp"

namespace gpupart {

// Whose curve it is: a process identity that survives restarts (its command line and its user, not its
// pid) on one GPU (a curve from an H100 says nothing about the same program on an H200).
struct CurveIdentity {
    std::string command;  // the command line, arguments joined by spaces
    std::string user;     // the user name (or uid as text)
    std::string gpu;      // the GPU's key: its UUID (model/gpu_queries.hpp gpu_key)
    bool operator==(const CurveIdentity&) const = default;
};

struct StoredCurve {
    CurveIdentity identity;
    int total_tpcs = 0;        // N: the GPU's TPCs when it was measured (classification is relative to it)
    std::string measured;      // when, as the caller wrote it (ISO 8601)
    std::string rate_meaning;  // what the rate counts, e.g. "kernel launches + graph replays per second"
    std::vector<CurvePoint> points;
    std::optional<double> memory_throughput;  // NVML's figure at full GPU, 0..1, when there was one
    bool operator==(const StoredCurve&) const = default;
};

// Limits a reader enforces (a curve file is a few KiB; anything far larger is not one).
inline constexpr std::size_t kMaxCurveBytes = 1 << 20;
inline constexpr std::size_t kMaxCurvePoints = 4096;

// The file's name for `identity`: "curve-<16 hex digits>.json", a 64-bit FNV-1a hash of the identity
// (command lines hold slashes and spaces; the identity itself is inside the file and checked on reading).
std::string curve_file_name(const CurveIdentity& identity);

std::string curve_to_json(const StoredCurve& curve);
// Throws UserError "<origin>: <what is wrong>; <what to do>" on anything but a well-formed curve of at
// most kMaxCurveBytes and kMaxCurvePoints points.
StoredCurve parse_curve_json(std::string_view text, std::string_view origin);

}  // namespace gpupart
