// The window's part of measuring and planning: the Scaling dock beside Charts, "Measure" and "Plan…" in the process
// table's context menu, and the Plan dialog, whose applied change goes on the window's undo stack like any
// other (Ctrl+Z reverts exactly its history entry). Measuring and planning run the gpupart CLI
// (widgets/cli_run.hpp): the window and the terminal say and journal the same.
#include <QDockWidget>
#include <QItemSelectionModel>
#include <QMenu>
#include <QUndoStack>

#include "change_command.hpp"
#include "main_window.hpp"
#include "model/user_error.hpp"
#include "plan_dialog.hpp"
#include "platform/user_names.hpp"
#include "process_table_model.hpp"
#include "process_table_view.hpp"
#include "scaling_panel.hpp"

namespace gpupart::gui {

void MainWindow::buildScaling(QDockWidget* beside) {
    scaling_ = new widgets::ScalingPanel(this);
    auto* dock = new QDockWidget("Scaling", this);
    dock->setObjectName("dock-scaling");
    dock->setWidget(scaling_);
    addDockWidget(Qt::BottomDockWidgetArea, dock);
    tabifyDockWidget(beside, dock);
    // The panel reads the curve directory when its tab comes up (and on inotify changes), never per refresh.
    connect(dock, &QDockWidget::visibilityChanged, scaling_, [this](bool visible) {
        if (visible) scaling_->reload();
    });
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const std::optional<int> pid = table_->selectedPid();
        const widgets::ProcessRow* row = pid ? model_->rowForPid(*pid) : nullptr;
        scaling_->setSelectedProcess(pid, row ? row->command.left(60) : QString());
    });
    connect(scaling_, &widgets::ScalingPanel::planRequested, this, [this] { openPlanDialog(); });
    connect(scaling_, &widgets::ScalingPanel::statusMessage, this, [this](const QString& text, bool error) { report(text, error); });
    // The walk changed the process's TPCs and put them back: show that now rather than at the next tick.
    connect(scaling_, &widgets::ScalingPanel::measureFinished, &session_, &GuiSession::refresh);
    table_->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(table_, &QWidget::customContextMenuRequested, this, &MainWindow::showProcessMenu);
    updateScalingContext();
}

namespace {

// What every gpupart run from the window gets so that it works on the GPU shown: its index in the snapshot
// (a recorded GPU may have no UUID: the demo's H200 has none, and the controller's key is then made up),
// and, for a recording (the demo, --snapshot FILE), that snapshot rather than this machine's GPUs.
QStringList cli_arguments(const GuiSession& session) {
    QStringList args{"--gpu", QString::number(session.gpuIndex())};
    if (!session.chosen().live) args << "--snapshot" << QString::fromStdString(session.chosen().origin);
    return args;
}

}  // namespace

void MainWindow::updateScalingContext() {
    scaling_->setCliArguments(cli_arguments(session_));
    // Curves are keyed by the controller's GPU key, as `gpupart measure` saves them (cli/curve_paths.cpp).
    scaling_->setGpu(QString::fromStdString(session_.state().gpu_uuid));
}

void MainWindow::measureProcess(int pid) {
    raiseDock("dock-scaling");
    scaling_->measure(pid);
}

void MainWindow::showProcessMenu(QPoint viewport_position) {
    const std::optional<int> pid = table_->pidAt(viewport_position);
    if (!pid) return;
    table_->selectPid(*pid);
    QMenu menu(this);
    QAction* measure = menu.addAction(QString("&Measure scaling curve of %1").arg(*pid), this, [this, pid] { measureProcess(*pid); });
    measure->setEnabled(!scaling_->measuring());
    measure->setStatusTip("gpupart measure: walks its TPCs down for a few seconds each, fits C(m) = a/m + b, puts them back");
    menu.addAction("&Plan partitions…", this, [this] { openPlanDialog(); });
    menu.exec(table_->viewport()->mapToGlobal(viewport_position));
}

widgets::PlanDialog* MainWindow::openPlanDialog() {
    scaling_->reload();  // a curve measured in a terminal since the panel last looked
    const SystemState& state = session_.state();
    std::vector<widgets::PlanCandidate> candidates;
    for (const ProcessState& process : state.processes) {
        const widgets::CurveEntry* entry = widgets::find_curve(scaling_->entries(), process.command, user_name(process.uid), state.gpu_uuid);
        if (entry == nullptr || !entry->fit) continue;  // gpupart plan refuses a process without a fitted curve
        const widgets::ProcessRow* row = model_->rowForPid(process.pid);
        candidates.push_back({process.pid, QString("%1 %2").arg(process.pid).arg(row ? row->command.left(50) : QString()),
                              widgets::class_word(*entry), entry->fit->model.rate(entry->curve.total_tpcs)});
    }
    auto* dialog = new widgets::PlanDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setCandidates(candidates);
    dialog->setState(state, session_.title());
    dialog->setCliArguments(cli_arguments(session_));
    try {
        dialog->setCliPath(scaling_->cliPath());  // a path set for tests; else $GPUPART_CLI or beside this program
    } catch (const UserError&) {
        // None found: the dialog says so, with where it looked, when it is asked to plan.
    }
    connect(dialog, &widgets::PlanDialog::applied, this, &MainWindow::pushPlanApplied);
    dialog->show();
    return dialog;
}

void MainWindow::pushPlanApplied(const widgets::PlanReply& reply) {
    // gpupart applied it as one history entry; the window's stack gets a command for that entry, so Ctrl+Z
    // reverts it (ChangeCommand::undo checks that entry is still the newest) and redo plans the same masks.
    Applied applied;
    applied.plan.action = reply.action.toStdString();
    for (const widgets::PlanReply::Change& change : reply.changes) {
        PlannedChange planned;
        planned.pid = change.pid;
        planned.start_time = change.start_time;
        planned.after_partitioned = true;
        if (const auto mask = TpcMask::parse_hex(change.after_mask.toStdString())) planned.after = *mask;
        applied.plan.changes.push_back(planned);
    }
    applied.entry.id = static_cast<JournalId>(reply.journal_id.value_or(0));
    session_.refresh();
    undo_->push(new ChangeCommand(session_, applied, [this](const QString& text, bool error) { report(text, error); }));
    report("Applied: " + reply.action, false);
}

}  // namespace gpupart::gui
