#pragma once
// The Plan dialog: targets for the processes that have a measured curve (a share of their rate
// alone, "50%", or a rate, "120" per second), a preview by `gpupart plan --json` (TPCs and mask per
// process, whether each target is met, the controller's findings, or why the targets cannot be met, and
// the proposed floorplan, read-only), and Apply, which runs the same command with --apply: one change,
// one history entry. The dialog plans nothing itself: what it previews is what the CLI will apply.
#include <optional>
#include <vector>

#include <QDialog>
#include <QStringList>

#include "controller/system_state.hpp"
#include "plan_reply.hpp"

QT_BEGIN_NAMESPACE
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QScrollArea;
class QTableWidget;
QT_END_NAMESPACE

namespace gpupart::widgets {

class CliRun;
class FloorplanView;

struct PlanCandidate {
    int pid = 0;
    QString label;      // "4101 python3 train.py" (escaped)
    QString intensity;  // its curve's class: "compute" / "memory"
    double alone_rate = 0;  // the fitted rate on every TPC of the GPU, to say what a share means
};

class PlanDialog : public QDialog {
    Q_OBJECT
public:
    explicit PlanDialog(QWidget* parent = nullptr);

    void setCandidates(const std::vector<PlanCandidate>& candidates);
    // The state the preview is drawn over: its GPU and its processes (the plan's masks replace theirs).
    void setState(const SystemState& state, const QString& title);
    void setCliPath(const QString& path) { cli_path_ = path; }
    void setCliArguments(const QStringList& args) { cli_args_ = args; }

    // "PID=TARGET" for every candidate with a target typed in (a bare number is a rate, "N%" a share).
    QStringList targets() const;
    void setTarget(int pid, const QString& target);  // tests, and the default of 100/n %

    void preview();  // runs gpupart plan --json
    void apply();    // runs gpupart plan --apply --json (enabled after a feasible, unrefused preview)
    bool running() const;

    // Shows a reply as the preview does (tests feed a hand-written one).
    void showReply(const PlanReply& reply, bool applied);
    const std::optional<PlanReply>& reply() const { return reply_; }
    QTableWidget* resultTable() const { return result_; }
    QString verdictText() const;
    QStringList findingLines() const;
    QPushButton* applyButton() const { return apply_button_; }
    FloorplanView* floorplan() const { return floorplan_; }
    QScrollArea* previewArea() const { return preview_; }
    double previewTextScale() const;  // the preview's scale: its 10 px text is drawn this many times as large

signals:
    void applied(const gpupart::widgets::PlanReply& reply);  // --apply worked: the window refreshes

private:
    void run_plan(bool apply);
    void on_finished(bool ok);
    void show_floorplan(const PlanReply& reply);

    struct Row {
        PlanCandidate candidate;
        QLineEdit* target = nullptr;
    };
    std::vector<Row> rows_;
    std::optional<SystemState> state_;
    QString title_;
    QString cli_path_;
    QStringList cli_args_;
    QStringList previewed_targets_;  // Apply applies what was previewed, never targets edited since
    bool applying_ = false;
    std::optional<PlanReply> reply_;

    QTableWidget* targets_table_;
    QTableWidget* result_;
    QLabel* verdict_;
    QListWidget* findings_;
    FloorplanView* floorplan_;
    QScrollArea* preview_;  // the picture at a legible scale, scrolled when the pane is smaller
    QPushButton* preview_button_;
    QPushButton* apply_button_;
    CliRun* run_;
};

}  // namespace gpupart::widgets
