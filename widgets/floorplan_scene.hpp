#pragma once
// What the floorplan shows besides the topology: who owns which TPC, what is selected, where the
// keyboard focus is. Built by the GUI from the controller's state, and by `gpupart export --png/--svg`
// from a snapshot's processes, so both paint the same picture.
#include <optional>
#include <string>
#include <vector>

#include <QColor>
#include <QString>

#include "controller/system_state.hpp"
#include "model/gpu.hpp"

namespace gpupart::widgets {

struct FloorplanOwner {
    int pid = 0;
    std::uint64_t start_time = 0;
    QString label;  // "1234 llm-serving"
    QColor color;
    TpcMask mask;
    bool operator==(const FloorplanOwner&) const = default;
};

// Legend entries after the owners: "free" is a drop target (releases TPCs), the others are a key.
enum class LegendKind { owner, free, shared, hole };

struct FloorplanScene {
    const Gpu* gpu = nullptr;
    QString title;  // "NVIDIA H200 (recording)"
    std::vector<FloorplanOwner> owners;
    TpcMask selection;
    std::optional<int> focus;               // mask bit with the keyboard focus
    std::optional<int> highlighted_legend;  // legend entry under a drag

    int legend_entry_count() const { return static_cast<int>(owners.size()) + 3; }
    LegendKind legend_kind(int index) const;
    std::vector<const FloorplanOwner*> owners_of(int mask_bit) const;
};

// The partitioned processes of a controller state as owners (unpartitioned ones own nothing).
std::vector<FloorplanOwner> owners_from_state(const SystemState& state);
// The processes recorded in a snapshot's GPU (gpupart export of a live machine) as owners.
std::vector<FloorplanOwner> owners_from_gpu(const Gpu& gpu);

// Rich-text tooltip of a tile: bit, GPC and slot, SMs, owners, and the source of each fact.
QString floorplan_tooltip(const FloorplanScene& scene, int mask_bit);

}  // namespace gpupart::widgets
