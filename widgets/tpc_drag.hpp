#pragma once
// Dragging TPCs between views: the MIME form of a selection, and the verdict a drop target shows while
// the drag hovers (the controller's findings for "give these TPCs to that process").
#include <functional>
#include <optional>

#include <QMimeData>
#include <QString>

#include "model/tpc_mask.hpp"

namespace gpupart::widgets {

inline constexpr const char* kTpcMimeType = "application/x-gpupart-tpcs";

QMimeData* make_tpc_mime(const TpcMask& tpcs);       // also offers the mask list as text
std::optional<TpcMask> tpcs_from_mime(const QMimeData* mime);

// Where TPCs are dropped: a process (pid) or "free" (no pid: release them from whoever holds them).
struct DropTarget {
    std::optional<int> pid;        // none: the "free" entry (release the TPCs)
    std::uint64_t start_time = 0;  // of the process the user dropped on: a pid reused meanwhile is refused
    bool operator==(const DropTarget&) const = default;
};

struct DropVerdict {
    bool allowed = false;
    bool warning = false;  // allowed, with warnings worth reading
    QString message;       // one line: the first error, else the warnings, else what will happen
};

// Asked by every drop target while a drag hovers and again on drop; the main window answers it by
// planning the change with the controller (nothing is applied while asking).
using DropJudge = std::function<DropVerdict(const DropTarget& target, const TpcMask& tpcs)>;
// Called on an allowed drop.
using DropAction = std::function<void(const DropTarget& target, const TpcMask& tpcs)>;

}  // namespace gpupart::widgets
