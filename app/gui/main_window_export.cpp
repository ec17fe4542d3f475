// The main window's exports (File > Export: the floorplan as PNG or SVG, the snapshot as JSON, the
// copy-engine picture) and its About box.
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

void MainWindow::exportFloorplanPng(const QString& path) const { widgets::export_floorplan_png(floorplan_->scene(), path); }
void MainWindow::exportFloorplanSvg(const QString& path) const { widgets::export_floorplan_svg(floorplan_->scene(), path); }

void MainWindow::exportSnapshotJson(const QString& path) const {
    // The snapshot with the partitioned processes as they are now, so the export shows who owns what.
    Snapshot snapshot = session_.chosen().snapshot;
    Gpu& gpu = snapshot.gpus.at(static_cast<std::size_t>(session_.gpuIndex()));
    gpu.processes.clear();
    for (const ProcessState& process : session_.state().processes) {
        gpu.processes.push_back(Process{
            process.pid, process.start_time, static_cast<int>(process.uid), process.command,
            process.partitioned ? std::optional<TpcMask>(process.mask) : std::nullopt,
            unknown_fact<std::uint64_t>("not read by gpupart-gui", {Source::registry, ""}),
            {Source::registry, Registry::default_directory()}});
    }
    save_snapshot(snapshot, path.toStdString());
}

void MainWindow::exportCopyEnginesPng(const QString& path) const { widgets::export_copy_engines_png(session_.gpu(), path); }
void MainWindow::exportCopyEnginesSvg(const QString& path) const { widgets::export_copy_engines_svg(session_.gpu(), path); }

void MainWindow::exportWithDialog(const QString& kind) {
    const QString suffix = kind.endsWith("png") ? "png" : kind.endsWith("svg") ? "svg" : "json";
    const QString filter = suffix == "png" ? "PNG image (*.png)" : suffix == "svg" ? "SVG image (*.svg)" : "gpupart snapshot (*.json)";
    const QString base = kind.startsWith("copy") ? "gpupart-copy-engines." : kind == "json" ? "gpupart-snapshot." : "gpupart-floorplan.";
    QString path = QFileDialog::getSaveFileName(this, "Export", base + suffix, filter);
    if (path.isEmpty()) return;
    try {
        if (kind == "png") exportFloorplanPng(path);
        else if (kind == "svg") exportFloorplanSvg(path);
        else if (kind == "copy-png") exportCopyEnginesPng(path);
        else if (kind == "copy-svg") exportCopyEnginesSvg(path);
        else exportSnapshotJson(path);
        report("Exported " + path, false);
    } catch (const std::exception& error) {
        report(error.what(), true);
    }
}

void MainWindow::showAbout() {
    const ChosenSnapshot& chosen = session_.chosen();
    QMessageBox::about(
        this, "About gpupart",
        QString("<h3>gpupart %1</h3><p>See how an NVIDIA GPU is built and shared, and move TPCs between running CUDA "
                "processes.</p><p><b>Shown:</b> %2<br><b>Why:</b> %3<br><b>Captured:</b> %4</p>"
                "<p><b>Registry:</b> %5<br><b>History:</b> %6</p><p>Qt %7 (built with %8), style %9</p>")
            .arg(GPUPART_VERSION, QString::fromStdString(chosen.origin).toHtmlEscaped(),
                 QString::fromStdString(chosen.why).toHtmlEscaped(), QString::fromStdString(chosen.snapshot.captured),
                 QString::fromStdString(Registry::default_directory()), QString::fromStdString(Journal::default_path()),
                 qVersion(), QT_VERSION_STR, QApplication::style()->name()));
}

}  // namespace gpupart::gui
