// The window's keyboard: F6 / Shift+F6 move between its regions (floorplan, process filter, process table,
// the docks on screen), Ctrl+F goes to the filter, and Delete releases TPCs only from the floorplan or the
// process table, after a confirmation that names every process and TPC it takes (Cancel is the default).
#include <algorithm>
#include <map>
#include <vector>

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>

#include "change_command.hpp"
#include "controller/give_plan.hpp"
#include "floorplan_scene.hpp"
#include "floorplan_view.hpp"
#include "main_window.hpp"
#include "owner_colors.hpp"
#include "process_table_model.hpp"
#include "process_table_view.hpp"

namespace gpupart::gui {
namespace {

QString tpc_list(const TpcMask& tpcs) {  // "TPC 3", "TPCs 0, 24", "TPCs 0-3, 8-11" (runs as the CLI writes them)
    return QString("TPC%1 %2").arg(tpcs.count() == 1 ? "" : "s", QString::fromStdString(tpcs.to_list()).replace(",", ", "));
}

// The lowest focusable widget inside a region (a dock's tree, list or button), else the region itself.
QWidget* focus_target(QWidget* region) {
    if (region->focusPolicy() & Qt::TabFocus) return region;
    for (QWidget* child : region->findChildren<QWidget*>())
        if ((child->focusPolicy() & Qt::TabFocus) && child->isVisible() && child->isEnabled()) return child;
    return region;
}

}  // namespace

void MainWindow::buildKeyboard(QMenu* view, QAction* release) {
    view->addSeparator();
    QAction* next = view->addAction("Focus next &region", this, [this] { cycleFocus(false); });
    next->setShortcut(QKeySequence(Qt::Key_F6));
    QAction* previous = view->addAction("Focus previous re&gion", this, [this] { cycleFocus(true); });
    previous->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F6));
    QAction* find = view->addAction("&Filter processes", this, [this] {
        raiseDock("dock-processes");
        filter_->setFocus(Qt::ShortcutFocusReason);
        filter_->selectAll();
    });
    find->setShortcut(QKeySequence::Find);
    // Delete acts where the TPCs or processes it would take are what has the focus, never window-wide.
    connect(release, &QAction::triggered, this, [this] { confirmRelease(false); });
    release->setToolTip("Release the selected TPCs (Delete in the floorplan; in the process table, from the selected processes)");
    auto widget_delete = [this](QWidget* widget, bool from_table) {
        auto* action = new QAction("Release selected TPCs…", widget);
        action->setShortcut(QKeySequence::Delete);
        action->setShortcutContext(Qt::WidgetShortcut);
        connect(action, &QAction::triggered, this, [this, from_table] { confirmRelease(from_table); });
        widget->addAction(action);
    };
    widget_delete(floorplan_, false);
    widget_delete(table_, true);
}

std::vector<QWidget*> MainWindow::focusRegions() const {
    std::vector<QWidget*> regions = {floorplan_, filter_, table_};
    for (QDockWidget* dock : findChildren<QDockWidget*>()) {
        // A dock behind another's tab is moved off screen, not hidden: only those a person can see count.
        if (dock->objectName() == "dock-processes" || dock->isHidden() || dock->widget() == nullptr ||
            dock->widget()->visibleRegion().isEmpty())
            continue;
        regions.push_back(dock->widget());
    }
    if (filter_->visibleRegion().isEmpty()) std::erase(regions, filter_);  // the processes dock closed or behind a tab
    if (table_->visibleRegion().isEmpty()) std::erase(regions, table_);
    return regions;
}

void MainWindow::cycleFocus(bool backwards) {
    const std::vector<QWidget*> regions = focusRegions();
    if (regions.empty()) return;
    QWidget* focused = QApplication::focusWidget();
    int current = -1;
    for (std::size_t i = 0; i < regions.size() && current < 0; ++i)
        if (focused != nullptr && (focused == regions[i] || regions[i]->isAncestorOf(focused))) current = static_cast<int>(i);
    const int count = static_cast<int>(regions.size());
    const int next = current < 0 ? (backwards ? count - 1 : 0) : (current + (backwards ? count - 1 : 1)) % count;
    focus_target(regions[static_cast<std::size_t>(next)])->setFocus(backwards ? Qt::BacktabFocusReason : Qt::TabFocusReason);
}

void MainWindow::confirmRelease(bool from_table) {
    const TpcMask selection = floorplan_->selection();
    if (selection.empty()) {
        report(from_table ? "Select TPCs in the floorplan first: Delete in the process table releases them from the selected processes"
                          : "No TPC selected: nothing to release",
               true);
        return;
    }
    std::vector<ProcessRef> chosen;  // the table's selected processes (from_table), else every holder
    if (from_table && table_->selectionModel() != nullptr)
        for (const QModelIndex& row : table_->selectionModel()->selectedRows())
            chosen.push_back({row.data(widgets::ProcessTableModel::PidRole).toInt(),
                              row.data(widgets::ProcessTableModel::StartTimeRole).toULongLong()});
    // What would be taken from whom, in letter order: the dialog says exactly that.
    std::map<int, QString> lines;
    std::vector<ProcessRef> holders;
    TpcMask released;
    for (const ProcessState& process : session_.state().processes) {
        const TpcMask taken = process.partitioned ? process.mask & selection : TpcMask{};
        if (taken.empty()) continue;
        if (from_table && std::none_of(chosen.begin(), chosen.end(), [&](const ProcessRef& ref) {
                return ref.pid == process.pid && ref.start_time == process.start_time;
            }))
            continue;
        const OwnerMark mark = widgets::owner_mark(process.pid, process.start_time);
        lines[mark.index] = QString("%1  pid %2 (%3): %4")
                                .arg(widgets::owner_letter_of(mark))
                                .arg(process.pid)
                                .arg(widgets::short_command(process.command), tpc_list(taken));
        holders.push_back({process.pid, process.start_time});
        released |= taken;
    }
    if (holders.empty()) {
        report(QString("%1 %2 held by %3: nothing to release")
                   .arg(tpc_list(selection), selection.count() == 1 ? "is not" : "are not",
                        from_table ? "the selected processes" : "any partitioned process"),
               true);
        return;
    }
    QStringList text;
    text << QString("Release %1 from %2 process%3?").arg(tpc_list(released)).arg(holders.size()).arg(holders.size() == 1 ? "" : "es");
    text << "";
    for (const auto& [index, line] : lines) text << line;
    text << "" << (from_table ? "Other processes that hold them keep them." : "They become free: no partitioned process keeps them.");
    QMessageBox box(QMessageBox::Question, "Release TPCs", text.join('\n'), QMessageBox::NoButton, this);
    box.setObjectName("release-confirmation");
    box.setTextFormat(Qt::PlainText);  // commands come from other users' processes
    QPushButton* release = box.addButton("Release", QMessageBox::DestructiveRole);
    QPushButton* cancel = box.addButton(QMessageBox::Cancel);
    box.setDefaultButton(cancel);
    box.setEscapeButton(cancel);
    box.exec();
    if (box.clickedButton() != release) {
        report("Nothing released", false);
        return;
    }
    const auto reporter = [this](const QString& message, bool error) { report(message, error); };
    if (from_table) apply_and_push(session_, *undo_, plan_release_from(session_.controller(), released, holders), reporter);
    else give_and_push(session_, *undo_, {std::nullopt}, released, reporter);
}

}  // namespace gpupart::gui
