#pragma once
// The window: floorplan in the middle; processes, findings, profiles, engines, copy engines and charts
// in docks; menus and shortcuts as Qt/KDE users expect. It shows what the session reads and changes
// partitions only through the session's controller (via the undo stack).
#include <QMainWindow>
#include <QPointer>

#include "exit_notice.hpp"
#include "gui_session.hpp"
#include "controller/interference.hpp"
#include "sources/gpu_meters.hpp"

class QByteArray;
class QComboBox;
class QDockWidget;
class QLabel;
class QLineEdit;
class QMenu;
class QSortFilterProxyModel;
class QTimer;
class QUndoStack;

namespace gpupart::widgets {
class ChartsPanel;
class CopyEngineView;
class EnginesView;
class FindingsPanel;
class FloorplanView;
class GpuMetersChart;
class ProfilesPanel;
class ProcessTableModel;
class PlanDialog;
class ProcessTableView;
class ScalingPanel;
class SmlpPanel;
struct PlanReply;
}  // namespace gpupart::widgets

namespace gpupart::gui {

class SpareWidthColumn;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(GuiSession& session, QWidget* parent = nullptr);

    widgets::FloorplanView* floorplan() const { return floorplan_; }
    widgets::ProcessTableView* processTable() const { return table_; }
    widgets::ProcessTableModel* processModel() const { return model_; }
    QUndoStack* undoStack() const { return undo_; }
    QString lastMessage() const { return last_message_; }
    bool lastMessageWasError() const { return last_error_; }
    int refreshIntervalMs() const;
    void setRefreshHz(double hz);

    // Exports (File menu, and tests): throw UserError on failure.
    void exportFloorplanPng(const QString& path) const;
    void exportFloorplanSvg(const QString& path) const;
    void exportSnapshotJson(const QString& path) const;
    void exportCopyEnginesPng(const QString& path) const;
    void exportCopyEnginesSvg(const QString& path) const;
    void raiseDock(const QString& object_name);  // "dock-engines", ... (View menu; screenshots)
    widgets::ProfilesPanel* profiles() const { return profiles_; }
    widgets::FindingsPanel* findings() const { return findings_; }
    widgets::ChartsPanel* charts() const { return charts_; }
    widgets::GpuMetersChart* gpuMetersChart() const { return gpu_chart_; }
    widgets::ScalingPanel* scaling() const { return scaling_; }
    widgets::SmlpPanel* smlp() const { return smlp_; }
    // The Plan dialog over the processes shown that have a curve (main_window_scaling.cpp); tests get it back.
    widgets::PlanDialog* openPlanDialog();
    // `gpupart measure` on a process (the table's context menu, the Scaling panel's button).
    void measureProcess(int pid);
    QString statusText() const;  // the permanent status area: processes, TPCs, MPS, the GPU's meters
    QString dropVerdict() const { return drop_verdict_; }  // the whole verdict of the drag over the table
    // The first start's geometry on this screen, or the saved one (kept on a screen): main_window_fit.cpp.
    void placeOnScreen(const QByteArray& saved);

    // Gives the floorplan's selection to a process (or frees it), as a drop or the "give to" menu does.
    bool giveSelection(const widgets::DropTarget& target);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildActions();
    void buildDocks();
    void showGiveMenu(QPoint global_position);
    void report(const QString& message, bool error);
    void updateViews();
    void updateStatus();
    void exportWithDialog(const QString& kind);
    void showAbout();
    // The Scaling dock, the process table's context menu and the Plan dialog (main_window_scaling.cpp).
    void buildScaling(QDockWidget* beside);
    void updateScalingContext();  // the GPU and snapshot every gpupart run gets
    void showProcessMenu(QPoint viewport_position);
    void pushPlanApplied(const widgets::PlanReply& reply);
    // The drag verdict in the status bar, cut at a word to fit, whole in its tooltip (main_window_fit.cpp).
    void showDropVerdict(const QString& text);
    QWidget* legible_scroll(QWidget* picture);  // a picture kept at a legible size, scrolled in its dock
    // F6 / Shift+F6 between regions, Ctrl+F to the filter, Delete in the floorplan and the table (main_window_keys.cpp).
    void buildKeyboard(QMenu* view, QAction* release);
    std::vector<QWidget*> focusRegions() const;
    void cycleFocus(bool backwards);
    void confirmRelease(bool from_table);  // the confirmation names every letter, pid and TPC it releases

    GuiSession& session_;
    widgets::FloorplanView* floorplan_ = nullptr;
    widgets::ProcessTableModel* model_ = nullptr;
    QSortFilterProxyModel* proxy_ = nullptr;
    widgets::ProcessTableView* table_ = nullptr;
    QLineEdit* filter_ = nullptr;
    widgets::FindingsPanel* findings_ = nullptr;
    widgets::ProfilesPanel* profiles_ = nullptr;
    widgets::EnginesView* engines_ = nullptr;
    widgets::CopyEngineView* copy_engines_ = nullptr;
    widgets::ChartsPanel* charts_ = nullptr;
    widgets::GpuMetersChart* gpu_chart_ = nullptr;
    widgets::ScalingPanel* scaling_ = nullptr;
    widgets::SmlpPanel* smlp_ = nullptr;
    GpuMeterReader meters_reader_;        // NVML, loaded once: meters, power/clock chart, process memory
    std::optional<GpuMeters> meters_;     // of the last refresh
    InterferenceWatch interference_;      // a partition slowed while a neighbour sped up: a finding
    QComboBox* gpu_selector_ = nullptr;
    QLabel* status_label_ = nullptr;
    QUndoStack* undo_ = nullptr;
    QTimer* timer_ = nullptr;
    QString last_message_;
    bool last_error_ = false;
    double refresh_hz_ = 4;
    bool columns_sized_ = false;
    ExitNotice exits_;                    // rows gone since the last refresh: said in the status bar
    QString drop_verdict_;
    SpareWidthColumn* command_column_ = nullptr;  // the Command column takes the spare width
};

}  // namespace gpupart::gui
