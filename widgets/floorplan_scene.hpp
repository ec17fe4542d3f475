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
    QChar letter = '?';  // the process's letter, as `gpupart top` shows it (owner_colors.hpp)
    bool operator==(const FloorplanOwner&) const = default;
};

// An SMLP holder's grant (libgpupart.so's locking protocol): drawn as a band along the bottom of the
// tiles it holds, in the holder's colour, over the operator's owner colours; it moves with every request.
struct FloorplanGrant {
    QString component;
    QString holder;  // "1234 (detect)"
    QColor color;    // the holder's owner colour, or grey for a process of no row
    TpcMask tpcs;
    bool alive = true;  // a holder that died keeps its grant until the next change sweeps it
    bool operator==(const FloorplanGrant&) const = default;
};

// Legend entries after the owners: "free" is a drop target (releases TPCs), the others are a key.
enum class LegendKind { owner, free, shared, hole };

struct FloorplanScene {
    const Gpu* gpu = nullptr;
    QString title;  // "NVIDIA H200 (recording)"
    std::vector<FloorplanOwner> owners;
    std::vector<FloorplanGrant> grants;     // SMLP holders on this GPU
    TpcMask selection;
    std::optional<int> focus;               // TPC number with the keyboard focus
    std::optional<int> highlighted_legend;  // legend entry under a drag

    int legend_entry_count() const { return static_cast<int>(owners.size()) + 3; }
    LegendKind legend_kind(int index) const;
    std::vector<const FloorplanOwner*> owners_of(int tpc_key) const;
    const FloorplanGrant* grant_of(int tpc_key) const;
};

// The SQ holders of `state`'s SMLP components on its GPU (or that do not say their GPU) as grants,
// coloured as its processes are.
std::vector<FloorplanGrant> grants_from_smlp(const SystemState& state);

// What tells a process apart in a legend: the program's name, or for interpreters and the demo worker
// its first argument ("python3 serve.py" is serve.py), escaped.
QString short_command(const std::string& command);

// The partitioned processes of a controller state as owners (unpartitioned ones own nothing).
std::vector<FloorplanOwner> owners_from_state(const SystemState& state);
// The processes recorded in a snapshot's GPU (gpupart export of a live machine) as owners.
std::vector<FloorplanOwner> owners_from_gpu(const Gpu& gpu);

// Rich-text tooltip of a tile: bit, GPC and slot, SMs, owners, and the source of each fact.
QString floorplan_tooltip(const FloorplanScene& scene, int tpc_key);

}  // namespace gpupart::widgets
