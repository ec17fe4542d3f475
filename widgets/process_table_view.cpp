#include "process_table_view.hpp"

#include <QDragMoveEvent>
#include <QHeaderView>

#include "process_table_model.hpp"

namespace gpupart::widgets {

ProcessTableView::ProcessTableView(QWidget* parent) : QTableView(parent) {
    setAcceptDrops(true);
    setDropIndicatorShown(true);
    setDragDropMode(QAbstractItemView::DropOnly);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setSortingEnabled(true);
    setAlternatingRowColors(true);
    setWordWrap(false);
    verticalHeader()->hide();
    horizontalHeader()->setStretchLastSection(true);
    horizontalHeader()->setSectionsMovable(true);
    setAccessibleName("Processes");
}

std::optional<int> ProcessTableView::pidAt(QPoint viewport_position) const {
    const QModelIndex index = indexAt(viewport_position);
    if (!index.isValid()) return std::nullopt;
    const QVariant pid = index.siblingAtColumn(0).data(ProcessTableModel::PidRole);
    return pid.isValid() ? std::optional<int>(pid.toInt()) : std::nullopt;
}

DropTarget ProcessTableView::targetAt(QPoint viewport_position, int pid) const {
    const QModelIndex index = indexAt(viewport_position);
    return DropTarget{pid, index.siblingAtColumn(0).data(ProcessTableModel::StartTimeRole).toULongLong()};
}

std::optional<int> ProcessTableView::selectedPid() const {
    if (selectionModel() == nullptr) return std::nullopt;
    const QModelIndexList rows = selectionModel()->selectedRows();
    if (rows.isEmpty()) return std::nullopt;
    return rows.front().data(ProcessTableModel::PidRole).toInt();
}

void ProcessTableView::selectPid(int pid) {
    if (model() == nullptr) return;
    for (int row = 0; row < model()->rowCount(); ++row) {
        const QModelIndex index = model()->index(row, 0);
        if (index.data(ProcessTableModel::PidRole).toInt() == pid) {
            selectRow(row);
            return;
        }
    }
}

void ProcessTableView::dragEnterEvent(QDragEnterEvent* event) {
    if (tpcs_from_mime(event->mimeData())) event->acceptProposedAction();
    else event->ignore();
}

void ProcessTableView::dragMoveEvent(QDragMoveEvent* event) {
    const auto tpcs = tpcs_from_mime(event->mimeData());
    const auto pid = tpcs ? pidAt(event->position().toPoint()) : std::nullopt;
    if (!pid || !judge_) {
        emit dropVerdict(tpcs ? "Drop on a process row to give it these TPCs" : QString(), false, false);
        event->ignore();
        return;
    }
    const DropVerdict verdict = judge_(targetAt(event->position().toPoint(), *pid), *tpcs);
    emit dropVerdict(verdict.message, verdict.allowed, verdict.warning);
    if (verdict.allowed) event->acceptProposedAction();
    else event->ignore();
}

void ProcessTableView::dragLeaveEvent(QDragLeaveEvent* event) {
    emit dropVerdict(QString(), false, false);
    QTableView::dragLeaveEvent(event);
}

void ProcessTableView::dropEvent(QDropEvent* event) {
    emit dropVerdict(QString(), false, false);
    const auto tpcs = tpcs_from_mime(event->mimeData());
    const auto pid = tpcs ? pidAt(event->position().toPoint()) : std::nullopt;
    if (!pid) return event->ignore();
    const DropTarget target = targetAt(event->position().toPoint(), *pid);
    if (!judge_ || !action_ || !judge_(target, *tpcs).allowed) return event->ignore();
    event->acceptProposedAction();
    action_(target, *tpcs);
}

}  // namespace gpupart::widgets
