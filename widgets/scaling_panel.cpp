#include "scaling_panel.hpp"

#include <QChart>
#include <QChartView>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineSeries>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <QValueAxis>

#include "cli_run.hpp"
#include "curve_store/curve_store.hpp"
#include "curve_store/curve_store_path.hpp"
#include "display_text.hpp"
#include "model/user_error.hpp"

namespace gpupart::widgets {
namespace {

const QString kEmptyText = QStringLiteral(
    "<p><b>No measured scaling curves yet.</b></p>"
    "<p>Select a process and press <b>Measure</b>, or run <code>gpupart measure PID</code>.</p>"
    "<p>A measurement walks the process through fewer and fewer TPCs for a few seconds each, counts its launches, "
    "fits C(m) = a/m + b and puts its TPCs back.</p>");

}  // namespace

ScalingPanel::ScalingPanel(QWidget* parent)
    : QWidget(parent),
      stack_(new QStackedWidget(this)),
      empty_(new QLabel(this)),
      list_(new QListWidget(this)),
      chart_(new QChart),
      chart_view_(new QChartView(chart_, this)),
      points_(new QScatterSeries),
      fit_(new QLineSeries),
      tpcs_axis_(new QValueAxis),
      rate_axis_(new QValueAxis),
      summary_(new QLabel(this)),
      target_(new QLabel(this)),
      measure_button_(new QPushButton("Measure", this)),
      cancel_button_(new QPushButton("Cancel", this)),
      plan_button_(new QPushButton("Plan…", this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(this)),
      run_(new CliRun(this)),
      watcher_(new QFileSystemWatcher(this)) {
    chart_->setAnimationOptions(QChart::NoAnimation);
    chart_->setBackgroundRoundness(0);
    chart_->setMargins(QMargins(4, 4, 4, 4));
    points_->setName("measured");
    points_->setMarkerSize(9);
    fit_->setName("fit 1/(a/m + b)");
    chart_->addSeries(fit_);
    chart_->addSeries(points_);  // on top of the line
    tpcs_axis_->setTitleText("TPCs");
    tpcs_axis_->setLabelFormat("%d");
    rate_axis_->setTitleText("rate (per second)");
    rate_axis_->setLabelFormat("%.0f");
    chart_->addAxis(tpcs_axis_, Qt::AlignBottom);
    chart_->addAxis(rate_axis_, Qt::AlignLeft);
    for (QAbstractSeries* series : {static_cast<QAbstractSeries*>(fit_), static_cast<QAbstractSeries*>(points_)}) {
        series->attachAxis(tpcs_axis_);
        series->attachAxis(rate_axis_);
    }
    chart_view_->setRenderHint(QPainter::Antialiasing);
    chart_view_->setMinimumHeight(160);
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::RichText);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    empty_->setWordWrap(true);
    empty_->setTextFormat(Qt::RichText);
    empty_->setAlignment(Qt::AlignCenter);
    empty_->setMargin(12);
    list_->setObjectName("scaling-curves");
    list_->setMinimumWidth(300);

    // The words beside the chart, under the list: a bottom dock is short, and the chart needs its height.
    auto* left = new QWidget(this);
    auto* left_layout = new QVBoxLayout(left);
    left_layout->setContentsMargins(0, 0, 0, 0);
    left_layout->addWidget(list_, 1);
    left_layout->addWidget(summary_, 2);
    summary_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(left);
    splitter->addWidget(chart_view_);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    stack_->addWidget(empty_);
    stack_->addWidget(splitter);

    progress_->setRange(0, 1000);
    progress_->setTextVisible(true);
    progress_->setFormat("%p%");
    progress_->hide();
    cancel_button_->hide();
    cancel_button_->setToolTip("Stop the measurement: gpupart puts the process's TPCs back (SIGINT)");
    measure_button_->setToolTip("Run gpupart measure on the selected process: its TPCs are walked down and put back");
    plan_button_->setToolTip("Size partitions for rate or share targets from the measured curves (gpupart plan)");
    status_->setWordWrap(true);
    auto* controls = new QHBoxLayout;
    controls->addWidget(target_, 1);
    controls->addWidget(progress_, 1);
    controls->addWidget(measure_button_);
    controls->addWidget(cancel_button_);
    controls->addWidget(plan_button_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(stack_, 1);

    connect(list_, &QListWidget::currentRowChanged, this, &ScalingPanel::show_entry);
    connect(measure_button_, &QPushButton::clicked, this, [this] {
        if (selected_pid_) measure(*selected_pid_);
    });
    connect(cancel_button_, &QPushButton::clicked, this, &ScalingPanel::cancelMeasure);
    connect(plan_button_, &QPushButton::clicked, this, &ScalingPanel::planRequested);
    connect(run_, &CliRun::progress, progress_, &QProgressBar::setValue);
    connect(run_, &CliRun::finished, this, &ScalingPanel::on_measure_finished);
    connect(watcher_, &QFileSystemWatcher::directoryChanged, this, [this] {
        if (isVisible()) reload();
    });
    status_->hide();
    try {
        dir_ = QString::fromStdString(default_curve_directory());
    } catch (const UserError& error) {
        dir_problem_ = plain_text(error.what());
    }
    setSelectedProcess(std::nullopt);
}

void ScalingPanel::setCurveDirectory(const QString& dir) {
    dir_ = dir;
    dir_problem_.clear();
    reload();
}

void ScalingPanel::setGpu(const QString& uuid) {
    if (uuid == gpu_) return;
    gpu_ = uuid;
    reload();
}

QString ScalingPanel::cliPath() const {
    if (!cli_path_.isEmpty()) return cli_path_;
    return gpupart_cli_path();  // throws UserError when there is none
}

void ScalingPanel::setMeasureSteps(int steps, int dwell_ms) {
    steps_ = steps;
    dwell_ms_ = dwell_ms;
}

void ScalingPanel::setSelectedProcess(std::optional<int> pid, const QString& label) {
    selected_pid_ = pid;
    selected_label_ = label;
    if (!measuring())
        target_->setText(pid ? QString("Process %1 %2").arg(*pid).arg(label) : QString("Select a process to measure"));
    update_buttons();
}

void ScalingPanel::watch_directory() {
    if (!watcher_->directories().isEmpty()) watcher_->removePaths(watcher_->directories());
    if (!dir_.isEmpty() && QFileInfo(dir_).isDir()) watcher_->addPath(dir_);
}

void ScalingPanel::reload() {
    std::vector<StoredCurve> curves;
    QStringList problems;
    if (!dir_.isEmpty()) {
        std::vector<std::string> unreadable;
        curves = CurveStore{dir_.toStdString()}.list(&unreadable);
        for (const std::string& problem : unreadable) problems << plain_text(problem);
    }
    watch_directory();
    // Keep the curve the user looked at selected across a reload (a new measurement adds one above it).
    std::optional<CurveIdentity> shown;
    if (const int row = list_->currentRow(); row >= 0 && row < static_cast<int>(entries_.size()))
        shown = entries_[static_cast<std::size_t>(row)].curve.identity;
    entries_ = curve_entries(std::move(curves), gpu_.toStdString());
    QSignalBlocker block(list_);
    list_->clear();
    int select = entries_.empty() ? -1 : 0;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        auto* item = new QListWidgetItem(curve_label(entries_[i]), list_);
        item->setToolTip(tooltip_text(curve_label(entries_[i])));
        if (!entries_[i].this_gpu) item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
        if (shown && entries_[i].curve.identity == *shown) select = static_cast<int>(i);
    }
    QString where = dir_.isEmpty() ? dir_problem_ : QString("Curves are kept in %1.").arg(dir_.toHtmlEscaped());
    if (!problems.isEmpty()) where += "<br>Unreadable: " + problems.join("<br>").toHtmlEscaped();
    empty_->setText(kEmptyText + "<p>" + where + "</p>");
    stack_->setCurrentWidget(entries_.empty() ? static_cast<QWidget*>(empty_) : stack_->widget(1));
    list_->setCurrentRow(select);
    show_entry(select);
}

void ScalingPanel::show_entry(int row) {
    if (row < 0 || row >= static_cast<int>(entries_.size())) {
        points_->clear();
        fit_->clear();
        summary_->clear();
        chart_->setTitle({});
        return;
    }
    const CurveEntry& entry = entries_[static_cast<std::size_t>(row)];
    fill_curve_series(entry, *points_, *fit_, *tpcs_axis_, *rate_axis_);
    chart_->setTitle(plain_text(entry.curve.identity.command).left(80).toHtmlEscaped());
    summary_->setText(curve_summary(entry));
}

QString ScalingPanel::summaryText() const { return summary_->text(); }
bool ScalingPanel::showsEmptyState() const { return stack_->currentWidget() == empty_; }
QString ScalingPanel::emptyStateText() const { return empty_->text(); }
QString ScalingPanel::statusText() const { return status_->isHidden() ? QString() : status_->text(); }
bool ScalingPanel::measuring() const { return run_->running(); }

void ScalingPanel::set_status(const QString& text, bool error) {
    status_->setText(text);
    status_->setStyleSheet(error ? "color: #b00020;" : QString());
    status_->setVisible(!text.isEmpty());
    if (!text.isEmpty()) emit statusMessage(text, error);
}

void ScalingPanel::update_buttons() {
    const bool busy = measuring();
    measure_button_->setEnabled(!busy && selected_pid_.has_value());
    measure_button_->setVisible(!busy);
    cancel_button_->setVisible(busy);
    progress_->setVisible(busy);
    plan_button_->setEnabled(!busy);
}

bool ScalingPanel::measure(int pid) {
    if (measuring()) {
        set_status("A measurement is running: cancel it first", true);
        return false;
    }
    QString program;
    try {
        program = cliPath();
    } catch (const UserError& error) {
        set_status(plain_text(error.what()), true);
        return false;
    }
    QStringList args{"measure", QString::number(pid)};
    args << cli_args_ << "--steps" << QString::number(steps_) << "--dwell" << QString::number(dwell_ms_) << "--json";
    // The CLI gives no progress on stdout with --json: the bar follows time, steps x dwell plus about
    // half a second a step for the shim to adopt each mask and a second to start and put the TPCs back.
    const int expected_ms = steps_ * (dwell_ms_ + 500) + 1000;
    measured_pid_ = pid;
    run_->start(program, args, expected_ms);
    cancel_button_->setEnabled(true);
    cancel_button_->setText("Cancel");
    target_->setText(QString("Measuring process %1 %2 (%3 TPC counts × %4 s)…")
                         .arg(pid).arg(pid == selected_pid_ ? selected_label_ : QString())
                         .arg(steps_).arg(dwell_ms_ / 1000.0));
    set_status({}, false);
    update_buttons();
    return true;
}

void ScalingPanel::cancelMeasure() {
    if (!measuring()) return;
    run_->interrupt();
    cancel_button_->setEnabled(false);
    cancel_button_->setText("Putting TPCs back…");
}

void ScalingPanel::on_measure_finished(bool ok) {
    const QJsonObject answer = QJsonDocument::fromJson(run_->standardOutput()).object();
    QString message;
    bool error = !ok;
    // A cancelled walk is said as one whatever its exit status: what matters is whether the TPCs went back.
    if (run_->interrupted()) {
        const bool restored = answer.value("restored").toBool(false);
        error = !restored;
        message = restored ? QString("Measurement of process %1 cancelled; its TPCs were put back").arg(measured_pid_)
                           : QString("Measurement of process %1 cancelled: %2").arg(measured_pid_).arg(run_->errorLine());
    } else if (ok) {
        const QJsonObject fit = answer.value("fit").toObject();
        message = QString("Measured process %1: %2-intensive, R² %3; curve saved")
                      .arg(measured_pid_)
                      .arg(answer.value("class").toObject().value("intensity").toString())
                      .arg(fit.value("r_squared").toDouble(), 0, 'f', 3);
    } else {
        message = run_->errorLine();
    }
    set_status(message, error);
    setSelectedProcess(selected_pid_, selected_label_);  // the label says what the button measures again
    reload();
    emit measureFinished(ok, message);
}

void ScalingPanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    reload();
}

}  // namespace gpupart::widgets
