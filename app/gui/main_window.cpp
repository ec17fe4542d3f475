#include "main_window.hpp"

#include <algorithm>

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDockWidget>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include "change_command.hpp"
#include "charts_panel.hpp"
#include "gpu_meters_chart.hpp"
#include "controller/profile_apply.hpp"
#include "copy_engine_painter.hpp"
#include "copy_engine_view.hpp"
#include "display_text.hpp"
#include "engines_view.hpp"
#include "findings_panel.hpp"
#include "profiles_panel.hpp"
#include "floorplan_painter.hpp"
#include "floorplan_view.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "process_table_model.hpp"
#include "process_table_view.hpp"
#include "owner_colors.hpp"
#include "smlp_panel.hpp"
#include "snapshot/snapshot_file.hpp"
#include "window_fit.hpp"

namespace gpupart::gui {

MainWindow::MainWindow(GuiSession& session, QWidget* parent) : QMainWindow(parent), session_(session) {
    setObjectName("gpupart-main-window");
    setWindowTitle(session_.title() + " — gpupart");
    undo_ = new QUndoStack(this);

    floorplan_ = new widgets::FloorplanView(this);
    floorplan_->setGpu(session_.gpu(), session_.title());
    floorplan_->setDropJudge([this](const widgets::DropTarget& t, const TpcMask& m) { return session_.judge(t, m); });
    floorplan_->setDropAction([this](const widgets::DropTarget& t, const TpcMask& m) {
        give_and_push(session_, *undo_, t, m, [this](const QString& text, bool error) { report(text, error); });
    });
    connect(floorplan_, &widgets::FloorplanView::giveMenuRequested, this, &MainWindow::showGiveMenu);
    connect(floorplan_, &widgets::FloorplanView::selectionChanged, this, &MainWindow::updateStatus);
    setCentralWidget(floorplan_);

    buildDocks();
    buildActions();

    status_label_ = new QLabel(this);
    statusBar()->addPermanentWidget(status_label_);

    timer_ = new QTimer(this);
    connect(timer_, &QTimer::timeout, &session_, &GuiSession::refresh);
    connect(&session_, &GuiSession::refreshed, this, &MainWindow::updateViews);
    connect(&session_, &GuiSession::refreshFailed, this, [this](const QString& message) { report(message, true); });

    QSettings settings;
    placeOnScreen(settings.value("window/geometry").toByteArray());
    if (!restoreState(settings.value("window/state").toByteArray())) {
        // First start: the floorplan gets most of the window, the docks what their contents need.
        resizeDocks({findChild<QDockWidget*>("dock-processes")}, {300}, Qt::Vertical);
        resizeDocks({findChild<QDockWidget*>("dock-findings")}, {430}, Qt::Horizontal);
    }
    setRefreshHz(settings.value("refresh/hz", 4.0).toDouble());
    updateViews();
    report(QString::fromStdString(session_.chosen().why), false);
}

void MainWindow::buildDocks() {
    model_ = new widgets::ProcessTableModel(this);
    proxy_ = new QSortFilterProxyModel(this);
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(widgets::ProcessTableModel::SortRole);
    proxy_->setFilterKeyColumn(-1);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    table_ = new widgets::ProcessTableView(this);
    table_->setModel(proxy_);
    table_->sortByColumn(widgets::ProcessTableModel::pid, Qt::AscendingOrder);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    command_column_ = new SpareWidthColumn(table_, widgets::ProcessTableModel::command, 320);
    table_->setDropJudge([this](const widgets::DropTarget& t, const TpcMask& m) { return session_.judge(t, m); });
    table_->setDropAction([this](const widgets::DropTarget& t, const TpcMask& m) {
        give_and_push(session_, *undo_, t, m, [this](const QString& text, bool error) { report(text, error); });
    });
    connect(table_, &widgets::ProcessTableView::dropVerdict, this, [this](const QString& text) { showDropVerdict(text); });
    filter_ = new QLineEdit(this);
    filter_->setObjectName("process-filter");
    filter_->setPlaceholderText("Filter processes (pid, user, command, shim status)…");
    filter_->setClearButtonEnabled(true);
    connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
    auto* processes = new QWidget(this);
    auto* layout = new QVBoxLayout(processes);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(filter_);
    layout->addWidget(table_);
    auto* dock = new QDockWidget("Processes", this);
    dock->setObjectName("dock-processes");
    dock->setWidget(processes);
    addDockWidget(Qt::BottomDockWidgetArea, dock);

    auto add_dock = [this](const QString& title, const QString& name, QWidget* widget, Qt::DockWidgetArea area) {
        auto* added = new QDockWidget(title, this);
        added->setObjectName(name);
        added->setWidget(widget);
        addDockWidget(area, added);
        return added;
    };
    findings_ = new widgets::FindingsPanel(this);
    profiles_ = new widgets::ProfilesPanel(this);
    profiles_->setController(&session_.controller());
    profiles_->applyPlan = [this](const Plan& plan) {
        if (!apply_and_push(session_, *undo_, plan, [this](const QString& text, bool error) { report(text, error); }))
            throw UserError(last_message_.toStdString());
    };
    QDockWidget* findings = add_dock("Findings", "dock-findings", findings_, Qt::RightDockWidgetArea);
    QDockWidget* profiles = add_dock("Profiles", "dock-profiles", profiles_, Qt::RightDockWidgetArea);
    tabifyDockWidget(findings, profiles);
    // SMLP components (libgpupart.so's locking protocol): their queues and who holds which TPCs, live.
    smlp_ = new widgets::SmlpPanel(this);
    tabifyDockWidget(findings, add_dock("SMLP", "dock-smlp", smlp_, Qt::RightDockWidgetArea));
    findings->raise();

    engines_ = new widgets::EnginesView(this);
    copy_engines_ = new widgets::CopyEngineView(this);
    charts_ = new widgets::ChartsPanel(this);
    QDockWidget* charts = add_dock("Charts", "dock-charts", charts_, Qt::BottomDockWidgetArea);
    gpu_chart_ = new widgets::GpuMetersChart(this);
    QDockWidget* power = add_dock("Power and clock", "dock-power-clock", gpu_chart_, Qt::BottomDockWidgetArea);
    tabifyDockWidget(charts, power);
    // A dock tab that is not raised is moved off screen, not hidden: the charts learn it here and do no work.
    connect(charts, &QDockWidget::visibilityChanged, charts_, &widgets::ChartsPanel::setOnScreen);
    connect(power, &QDockWidget::visibilityChanged, gpu_chart_, &widgets::GpuMetersChart::setOnScreen);
    QDockWidget* engines = add_dock("Engines", "dock-engines", engines_, Qt::BottomDockWidgetArea);
    QDockWidget* copy = add_dock("Copy engines", "dock-copy-engines", legible_scroll(copy_engines_), Qt::BottomDockWidgetArea);
    // Every bottom dock in one tab group (power was split off when charts moved): a hidden tab paints nothing.
    tabifyDockWidget(dock, charts);
    tabifyDockWidget(dock, power);
    tabifyDockWidget(dock, engines);
    tabifyDockWidget(dock, copy);
    buildScaling(charts);
    dock->raise();
    engines_->setGpu(session_.gpu());
    copy_engines_->setGpu(session_.gpu());
}

void MainWindow::raiseDock(const QString& object_name) {
    if (auto* dock = findChild<QDockWidget*>(object_name)) {
        dock->show();
        dock->raise();
    }
}

void MainWindow::showGiveMenu(QPoint global_position) {
    const TpcMask selection = floorplan_->selection();
    QMenu menu(this);
    if (selection.empty()) {
        menu.addAction("Select TPCs first (click, space, or a GPC header)")->setEnabled(false);
    } else {
        menu.addSection(QString("Give %1 TPC%2 to").arg(selection.count()).arg(selection.count() == 1 ? "" : "s"));
        for (const widgets::ProcessRow& row : session_.rows()) {
            const widgets::DropTarget target{row.pid, row.start_time};
            const widgets::DropVerdict verdict = session_.judge(target, selection);
            QPixmap swatch(12, 12);
            swatch.fill(row.color);
            // row.command is escaped already; '&' would make the next letter a shortcut.
            QAction* action = menu.addAction(QIcon(swatch), QString("%1 %2").arg(row.pid).arg(row.command.left(40).replace('&', "&&")),
                                             this, [this, target] { giveSelection(target); });
            action->setEnabled(verdict.allowed);
            action->setToolTip(widgets::tooltip_text(verdict.message));
            action->setStatusTip(verdict.message);
        }
        menu.addSeparator();
        const widgets::DropVerdict free_verdict = session_.judge({std::nullopt}, selection);
        QAction* release = menu.addAction("Free (release from every process)", this, [this] { giveSelection({std::nullopt}); });
        release->setEnabled(free_verdict.allowed);
        release->setStatusTip(free_verdict.message);
        menu.setToolTipsVisible(true);
    }
    menu.exec(global_position);
}

bool MainWindow::giveSelection(const widgets::DropTarget& target) {
    const TpcMask selection = floorplan_->selection();
    if (selection.empty()) {
        report("No TPC selected", true);
        return false;
    }
    return give_and_push(session_, *undo_, target, selection, [this](const QString& text, bool error) { report(text, error); });
}

void MainWindow::report(const QString& text, bool error) {
    const QString message = widgets::plain_text(text.toStdString());  // errors quote file names and slots
    last_message_ = message;
    last_error_ = error;
    statusBar()->showMessage(message, error ? 15000 : 6000);
    if (error) QApplication::beep();
}

void MainWindow::updateViews() {
    const std::optional<int> selected_pid = table_->selectedPid();
    // NVML's meters of this GPU: the status area, the power/clock chart and each process's GPU memory.
    meters_ = meters_reader_.read(session_.state().gpu_uuid);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (meters_)
        gpu_chart_->addSample(now, meters_->power_watts, meters_->sm_clock_mhz, meters_->power_limit_watts, meters_->max_sm_clock_mhz);
    else
        gpu_chart_->setUnavailable(QString::fromStdString(meters_reader_.problem()));
    std::vector<widgets::ProcessRow> rows = session_.rows();
    if (meters_)
        for (widgets::ProcessRow& row : rows) {
            if (const auto it = meters_->process_memory.find(row.pid); it != meters_->process_memory.end()) row.gpu_memory_bytes = it->second;
            row.gpu_percent = gpu_process_percent(*meters_, row.pid, session_.state().mps_running);
        }
    model_->setRows(rows);
    if (const QString gone = exits_.update(rows); !gone.isEmpty()) report(gone, false);
    if (selected_pid && !table_->selectedPid()) table_->selectPid(*selected_pid);
    if (!columns_sized_ && model_->rowCount() > 0) {  // once: later refreshes keep what the user dragged
        table_->resizeColumnsToContents();
        command_column_->fit();  // the spare width, at least 320 px
        columns_sized_ = true;
    }
    floorplan_->setOwners(widgets::owners_from_state(session_.state()));
    floorplan_->setGrants(widgets::grants_from_smlp(session_.state()));
    std::map<int, widgets::KnownProcess> known;  // SMLP requests of the table's processes: named and coloured as there
    for (const ProcessState& process : session_.state().processes)
        known[process.pid] = {QString("%1 %2").arg(process.pid).arg(widgets::short_command(process.command)),
                              widgets::owner_color(process.pid, process.start_time)};
    smlp_->setComponents(session_.state(), known);
    std::vector<Finding> findings = session_.findings();
    std::vector<InterferenceWatch::Sample> rates;
    for (const widgets::ProcessRow& row : rows) {
        std::uint64_t generation = 0;
        for (const ProcessState& p : session_.state().processes)
            if (p.pid == row.pid && p.start_time == row.start_time) generation = p.generation;
        rates.push_back({row.pid, row.start_time, row.partitioned, generation, row.launches_per_second});
    }
    const auto slowed = interference_.update(rates, std::chrono::steady_clock::now());
    findings.insert(findings.begin(), slowed.begin(), slowed.end());
    findings_->setFindings(findings);
    // Charts: a TPC that n partitioned processes share counts 1/n to each, so a sample adds up to 100%.
    const SystemState& state = session_.state();
    std::vector<widgets::ProcessSample> samples;
    for (const widgets::ProcessRow& row : session_.rows()) {
        double share = 0;
        if (row.partitioned) {
            for (const int bit : row.tpcs.bits()) {
                int holders = 0;
                for (const ProcessState& process : state.processes) holders += process.partitioned && process.mask.test(bit) ? 1 : 0;
                share += holders > 0 ? 1.0 / holders : 0;
            }
            share /= std::max(1, real_tpcs(state.gpu).count());
        }
        const QString name = row.command.section(' ', 0, 0).section('/', -1);
        const QString label = QString("%1 %2").arg(row.pid).arg(name == "gpupart-demo-worker" ? row.command.section(' ', 1, 1) : name);
        samples.push_back({row.pid, row.start_time, label, row.launches_per_second.value_or(0), share});
    }
    charts_->addSample(now, samples);
    updateStatus();
}

QString MainWindow::statusText() const { return status_label_->text(); }

void MainWindow::updateStatus() {
    const SystemState& state = session_.state();
    TpcMask owned;
    for (const ProcessState& process : state.processes)
        if (process.partitioned) owned |= process.mask;
    const TpcMask real = real_tpcs(state.gpu);
    status_label_->setText(QString("%1 processes · %2 of %3 TPCs owned · %4 · %5")
                               .arg(state.processes.size())
                               .arg((owned & real).count())
                               .arg(real.count())
                               .arg(state.mps_running ? "MPS up" : "no MPS")
                               .arg(refresh_hz_ > 0 ? QString("%1 Hz").arg(refresh_hz_) : QString("paused")));
    if (meters_) {
        QStringList parts;
        for (const std::string& part : meter_parts(*meters_)) parts << QString::fromStdString(part);
        status_label_->setText(status_label_->text() + " · " + parts.join(" · "));
        status_label_->setToolTip(state.mps_running ? "Under MPS a driver may count a client's GPU memory in the MPS server's: such a client shows none" : QString());
    } else {
        status_label_->setToolTip(QString::fromStdString(meters_reader_.problem()));
    }
}

int MainWindow::refreshIntervalMs() const { return timer_->isActive() ? timer_->interval() : 0; }

void MainWindow::setRefreshHz(double hz) {
    refresh_hz_ = hz;
    if (hz <= 0) timer_->stop();
    else timer_->start(static_cast<int>(1000 / hz));
    QSettings().setValue("refresh/hz", hz);
    updateStatus();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    QMainWindow::closeEvent(event);
}

}  // namespace gpupart::gui
