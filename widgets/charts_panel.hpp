#pragma once
// Live charts of the last five minutes: kernel launches per second of each process (lines), and how
// the GPU's TPCs are shared out over time (stacked areas, the TPCs no process holds on top in grey).
// Side by side in a wide panel (a bottom dock), one above the other in a tall one, so each plot keeps the
// height its axis labels need; an axis title that would still be cut is left out (the chart's title says the
// same). Fed one sample per refresh (4 Hz by default). No series is ever rebuilt: a sample appends a point or
// moves the newest one (launch rates are drawn a point a second; a steady share is two points), and
// points that left the window are dropped in batches every ~10 s. Qt Charts recomputes a series'
// geometry on every change, so fewer points and fewer changes are what keep 15 processes cheap
// (tests/bench/bench_charts_panel.cpp; figures in widgets/README.md). While the panel is not on screen (its
// dock tab not raised) a sample is only queued: the series and axes catch up in one pass when it is shown,
// so a hidden panel costs no chart work. On screen, the samples are drawn once a second (at the first sample
// of each second), and the time axes move a whole second at a time.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include <QColor>
#include <QString>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QAreaSeries;
class QChart;
class QChartView;
class QDateTimeAxis;
class QLineSeries;
class QResizeEvent;
class QShowEvent;
class QSplitter;
class QValueAxis;
QT_END_NAMESPACE

namespace gpupart::widgets {

struct ProcessSample {
    int pid = 0;
    std::uint64_t start_time = 0;  // with the pid, names the process (and picks its colour)
    QString label;                 // legend text: "4101 python3"
    double launches_per_second = 0;
    // Fraction (0..1) of the GPU's TPCs attributed to this process; a TPC that n processes share counts
    // 1/n to each, so the shares of one sample add up to at most 1. A stack that would pass 100% is cut
    // at 100% (the processes stacked last lose the excess).
    double tpc_share = 0;
};

class ChartsPanel : public QWidget {
    Q_OBJECT
public:
    static constexpr qint64 kWindowMs = 5 * 60 * 1000;

    explicit ChartsPanel(QWidget* parent = nullptr);
    ~ChartsPanel() override;

    // One refresh: every running process once. A process missing from a sample has ended (or left the
    // registry): its series stop there, and go once their last point is older than the window. Points
    // older than the window are dropped within 10 s (the newest of them is kept, so lines reach the
    // left edge). Times must not go backwards; a sample older than the previous one is ignored.
    // The sample waits (see pendingSamples) until the next draw: the first sample of each second while the
    // panel is on screen, or its showing again.
    void addSample(qint64 msecs_since_epoch, const std::vector<ProcessSample>& processes);
    void clear();

    QChart* launchesChart() const { return launches_chart_; }
    QChart* shareChart() const { return share_chart_; }
    // The series of a process that is running now (nullptr when it is not in the last sample).
    QLineSeries* launchesSeries(int pid, std::uint64_t start_time) const;
    QAreaSeries* shareSeries(int pid, std::uint64_t start_time) const;
    QAreaSeries* unownedSeries() const { return unowned_; }
    // Samples not yet in the series (at most the window's worth), and drawing them now (tests, screenshots).
    int pendingSamples() const { return static_cast<int>(pending_.size()); }
    void drawNow();
    // A dock tab that is not raised stays "visible" to Qt (QMainWindow moves it off screen instead of hiding
    // it): the window says so from QDockWidget::visibilityChanged. Shown again, the series catch up.
    void setOnScreen(bool on_screen);
    bool onScreen() const { return on_screen_ && isVisible(); }

    QSplitter* splitter() const { return splitter_; }

protected:
    void showEvent(QShowEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    struct Track;
    using Key = std::pair<int, std::uint64_t>;

    Track& start_track(const Key& key, const ProcessSample& sample);
    void apply_sample(qint64 msecs_since_epoch, const std::vector<ProcessSample>& processes);
    void catch_up();
    void drop_old_points(qint64 cutoff);
    void update_axes();
    void fit_ticks();
    void fit_legend();

    QChart* launches_chart_;
    QChart* share_chart_;
    QChartView* launches_view_;
    QChartView* share_view_;
    QSplitter* splitter_;
    QDateTimeAxis* launches_time_;
    QDateTimeAxis* share_time_;
    QValueAxis* launches_axis_;
    QValueAxis* share_axis_;
    QLineSeries* unowned_lower_;
    QLineSeries* unowned_upper_;
    QAreaSeries* unowned_;

    std::vector<std::unique_ptr<Track>> tracks_;  // stacking order: oldest at the bottom
    std::map<Key, Track*> running_;               // the tracks of the processes in the last sample
    // The largest launch rate of each sample still in the window, kept decreasing (a sliding-window
    // maximum), so the axis can shrink again when a burst scrolls out without scanning every series.
    std::deque<std::pair<qint64, double>> launch_peaks_;
    double launches_top_ = 0;
    int launches_intervals_ = 4;  // tick intervals the launches axis has room for (fit_ticks)
    qint64 last_ms_ = -1;
    qint64 axis_end_ms_ = -1;
    qint64 drawn_second_ = -1;  // the second (of msecs since the epoch) of the last draw  // the time axes' right end: last_ms_ rounded up to a whole second
    // Samples not drawn yet, oldest first; applied with the series' signals blocked at the next draw.
    std::deque<std::pair<qint64, std::vector<ProcessSample>>> pending_;
    bool catching_up_ = false;
    bool on_screen_ = true;
};

}  // namespace gpupart::widgets
