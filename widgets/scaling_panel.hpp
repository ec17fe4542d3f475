#pragma once
// The Scaling panel: the scaling curves `gpupart measure` saved, one drawn at a time (the
// measured rates against TPCs as points, the fitted rate 1/(a/m + b) as a line, the fit and the class
// in words), and a Measure button that runs `gpupart measure` on the process selected in the window.
//
// It reads the curve directory only when the curves may have changed: on showing, when the directory
// changes (inotify, through QFileSystemWatcher: no polling) and after its own measurement. The window's
// refresh timer never reaches it, so the panel costs nothing at 4 Hz.
#include <optional>
#include <vector>

#include <QString>
#include <QStringList>
#include <QWidget>

#include "scaling_curves.hpp"

QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QFileSystemWatcher;
class QLabel;
class QLineSeries;
class QListWidget;
class QProgressBar;
class QPushButton;
class QScatterSeries;
class QStackedWidget;
class QValueAxis;
QT_END_NAMESPACE

namespace gpupart::widgets {

class CliRun;

class ScalingPanel : public QWidget {
    Q_OBJECT
public:
    explicit ScalingPanel(QWidget* parent = nullptr);

    // Where the curves are (default: curve_store_path.hpp's, as the CLI) and the GPU shown (its UUID):
    // that GPU's curves are listed first.
    void setCurveDirectory(const QString& dir);
    QString curveDirectory() const { return dir_; }
    void setGpu(const QString& uuid);
    // Arguments every `gpupart` run gets so that it works on what the window shows (--gpu, --snapshot).
    void setCliArguments(const QStringList& args) { cli_args_ = args; }
    // The gpupart binary (default: gpupart_cli_path(), which honours $GPUPART_CLI).
    void setCliPath(const QString& path) { cli_path_ = path; }
    QString cliPath() const;
    // --steps and --dwell of Measure (the CLI's defaults: 6 counts of 2000 ms).
    void setMeasureSteps(int steps, int dwell_ms);

    // The process the Measure button measures (the window's selection); empty: none selected.
    void setSelectedProcess(std::optional<int> pid, const QString& label = {});

    const std::vector<CurveEntry>& entries() const { return entries_; }
    void reload();  // reads the directory now

    // Runs `gpupart measure PID --json`; false (and said in the panel) while one is running or it cannot start.
    bool measure(int pid);
    void cancelMeasure();  // SIGINT: the CLI puts the TPCs back and ends
    bool measuring() const;

    // Widgets, for tests and screenshots.
    QListWidget* curveList() const { return list_; }
    QChart* chart() const { return chart_; }
    QScatterSeries* pointsSeries() const { return points_; }
    QLineSeries* fitSeries() const { return fit_; }
    QString summaryText() const;
    bool showsEmptyState() const;
    QString emptyStateText() const;
    QPushButton* measureButton() const { return measure_button_; }
    QPushButton* cancelButton() const { return cancel_button_; }
    QPushButton* planButton() const { return plan_button_; }
    QProgressBar* progressBar() const { return progress_; }
    QString statusText() const;
    CliRun* run() const { return run_; }

signals:
    void measureFinished(bool ok, const QString& message);  // after the curves were reloaded
    void planRequested();
    void statusMessage(const QString& message, bool error);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void show_entry(int row);
    void set_status(const QString& text, bool error);
    void on_measure_finished(bool ok);
    void update_buttons();
    void watch_directory();

    QString dir_;
    QString dir_problem_;
    QString gpu_;
    QStringList cli_args_;
    QString cli_path_;
    int steps_ = 6;
    int dwell_ms_ = 2000;
    std::optional<int> selected_pid_;
    QString selected_label_;
    int measured_pid_ = 0;
    std::vector<CurveEntry> entries_;

    QStackedWidget* stack_;
    QLabel* empty_;
    QListWidget* list_;
    QChart* chart_;
    QChartView* chart_view_;
    QScatterSeries* points_;
    QLineSeries* fit_;
    QValueAxis* tpcs_axis_;
    QValueAxis* rate_axis_;
    QLabel* summary_;
    QLabel* target_;
    QPushButton* measure_button_;
    QPushButton* cancel_button_;
    QPushButton* plan_button_;
    QProgressBar* progress_;
    QLabel* status_;
    CliRun* run_;
    QFileSystemWatcher* watcher_;
};

}  // namespace gpupart::widgets
