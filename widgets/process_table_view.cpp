#include "process_table_view.hpp"

#include <QDragMoveEvent>
#include <QHeaderView>
#include <QPainter>

#include "process_table_model.hpp"

namespace gpupart::widgets {

ProcessTableView::ProcessTableView(QWidget* parent) : QTableView(parent) {
    setAcceptDrops(true);
    setDropIndicatorShown(true);
    setDragDropMode(QAbstractItemView::DropOnly);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::ExtendedSelection);  // Delete releases TPCs from each selected process
    // Tab and Shift+Tab leave the table (arrows move between rows): moving from cell to cell of a read-only
    // table trapped keyboard users in it.
    setTabKeyNavigation(false);
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
        setDropTarget(std::nullopt, false);
        emit dropVerdict(tpcs ? "Drop on a process row to give it these TPCs" : QString(), false, false);
        event->ignore();
        return;
    }
    const DropVerdict verdict = judge_(targetAt(event->position().toPoint(), *pid), *tpcs);
    setDropTarget(pid, verdict.allowed);
    emit dropVerdict(verdict.message, verdict.allowed, verdict.warning);
    if (verdict.allowed) event->acceptProposedAction();
    else event->ignore();
}

void ProcessTableView::dragLeaveEvent(QDragLeaveEvent* event) {
    setDropTarget(std::nullopt, false);
    emit dropVerdict(QString(), false, false);
    QTableView::dragLeaveEvent(event);
}

void ProcessTableView::dropEvent(QDropEvent* event) {
    setDropTarget(std::nullopt, false);
    emit dropVerdict(QString(), false, false);
    const auto tpcs = tpcs_from_mime(event->mimeData());
    const auto pid = tpcs ? pidAt(event->position().toPoint()) : std::nullopt;
    if (!pid) return event->ignore();
    const DropTarget target = targetAt(event->position().toPoint(), *pid);
    if (!judge_ || !action_ || !judge_(target, *tpcs).allowed) return event->ignore();
    event->acceptProposedAction();
    action_(target, *tpcs);
}

void ProcessTableView::setDropTarget(std::optional<int> pid, bool allowed) {
    if (pid == drop_pid_ && allowed == drop_allowed_) return;
    drop_pid_ = pid;
    drop_allowed_ = allowed;
    viewport()->update();
}

void ProcessTableView::paintEvent(QPaintEvent* event) {
    QTableView::paintEvent(event);
    if (!drop_pid_ || model() == nullptr) return;
    for (int row = 0; row < model()->rowCount(); ++row) {
        if (model()->index(row, 0).data(ProcessTableModel::PidRole).toInt() != *drop_pid_) continue;
        const QRect first = visualRect(model()->index(row, 0));
        const QRect band(0, first.top(), viewport()->width(), first.height());
        QPainter painter(viewport());
        QColor colour = drop_allowed_ ? palette().color(QPalette::Highlight) : QColor(0xc6, 0x28, 0x28);
        colour.setAlpha(70);
        painter.fillRect(band, colour);
        colour.setAlpha(255);
        painter.setPen(QPen(colour, 2));
        painter.drawRect(band.adjusted(1, 1, -1, -1));
        return;
    }
}

}  // namespace gpupart::widgets
