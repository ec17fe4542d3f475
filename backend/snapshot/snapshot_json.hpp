#pragma once
// The versioned JSON form of a Snapshot (docs/snapshot-format.md). Writing is stable: the same
// model always gives the same bytes. Reading is strict: a missing, mistyped or unknown field fails
// with its path ("gpus[0].tpcs[3].mask_bit: expected an integer"), and nothing half-read is returned.
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "model/gpu.hpp"

namespace gpupart {

inline constexpr const char* kSnapshotFormatName = "gpupart-snapshot";

// A field-level problem; what() is "<json path>: <what is wrong>".
class SnapshotFormatError : public std::runtime_error {
public:
    explicit SnapshotFormatError(const std::string& message) : std::runtime_error(message) {}
};

nlohmann::ordered_json snapshot_to_json(const Snapshot& snapshot);
nlohmann::ordered_json gpu_to_json(const Gpu& gpu);
// Parts of a GPU, as gpu_to_json writes them, for commands that print one part (engines, copy engines).
nlohmann::ordered_json engine_to_json(const Engine& engine);
nlohmann::ordered_json runlist_to_json(const Runlist& runlist);
nlohmann::ordered_json lce_to_json(const LogicalCopyEngine& lce);
nlohmann::ordered_json fifo_to_json(const FifoCounts& fifo);
nlohmann::ordered_json provenance_to_json(const Provenance& from);
nlohmann::ordered_json fact_to_json(const Fact<int>& fact);

Snapshot snapshot_from_json(const nlohmann::ordered_json& document);  // throws SnapshotFormatError

}  // namespace gpupart
