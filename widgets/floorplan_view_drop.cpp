// The floorplan's drop side: what lies under the pointer (a tile's owner, a legend entry or "free"), the
// drop hint while dragging and the drop itself. floorplan_view.cpp draws, selects and starts drags.
#include "floorplan_view.hpp"

#include <QDragEnterEvent>
#include <QDragLeaveEvent>
#include <QDragMoveEvent>
#include <QDropEvent>

#include "floorplan_painter.hpp"

namespace gpupart::widgets {

std::optional<DropTarget> FloorplanView::legendTargetAt(QPointF widget_point, int* entry) const {
    const auto index = geometry_.legend_entry_at(toPicture(widget_point));
    if (!index || *index >= scene_.legend_entry_count()) return std::nullopt;
    if (entry != nullptr) *entry = *index;
    switch (scene_.legend_kind(*index)) {
    case LegendKind::owner: {
        const FloorplanOwner& owner = scene_.owners[static_cast<std::size_t>(*index)];
        return DropTarget{owner.pid, owner.start_time};
    }
    case LegendKind::free: return DropTarget{std::nullopt};
    default: return std::nullopt;
    }
}

void FloorplanView::dragEnterEvent(QDragEnterEvent* event) {
    if (tpcs_from_mime(event->mimeData())) event->acceptProposedAction();
}

void FloorplanView::dragMoveEvent(QDragMoveEvent* event) {
    const auto tpcs = tpcs_from_mime(event->mimeData());
    int entry = -1;
    const auto target = tpcs ? legendTargetAt(event->position(), &entry) : std::nullopt;
    scene_.highlighted_legend = target ? std::optional<int>(entry) : std::nullopt;
    if (!target || !judge_) {
        drop_message_ = tpcs ? "Drop on a process (legend or process table) or on \"free\"" : QString();
        drop_allowed_ = false;
        drop_warning_ = false;
        event->ignore();
        update();
        return;
    }
    const DropVerdict verdict = judge_(*target, *tpcs);
    drop_message_ = verdict.message;
    drop_allowed_ = verdict.allowed;
    drop_warning_ = verdict.warning;
    if (verdict.allowed) event->acceptProposedAction();
    else event->ignore();
    update();
}

void FloorplanView::dragLeaveEvent(QDragLeaveEvent*) {
    scene_.highlighted_legend.reset();
    drop_message_.clear();
    update();
}

void FloorplanView::dropEvent(QDropEvent* event) {
    const auto tpcs = tpcs_from_mime(event->mimeData());
    const auto target = tpcs ? legendTargetAt(event->position()) : std::nullopt;
    scene_.highlighted_legend.reset();
    drop_message_.clear();
    update();
    if (!target || !judge_ || !action_) return event->ignore();
    if (!judge_(*target, *tpcs).allowed) return event->ignore();
    event->acceptProposedAction();
    action_(*target, *tpcs);
}


}  // namespace gpupart::widgets
