#pragma once
// Live charts of the last five minutes: kernel launches per second of each process (lines), and how
// the GPU's TPCs are shared out over time (stacked areas, the TPCs no process holds on top in grey).
// Fed one sample per refresh (4 Hz by default). No series is ever rebuilt: a sample appends a point or
// moves the newest one (launch rates are drawn a point a second; a steady share is two points), and
// points that left the window are dropped in batches every ~10 s. Qt Charts recomputes a series'
// geometry on every change, so fewer points and fewer changes are what keep 15 processes cheap
// (tests/bench/bench_charts_panel.cpp; figures in widgets/README.md).
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
    void addSample(qint64 msecs_since_epoch, const std::vector<ProcessSample>& processes);
    void clear();

    QChart* launchesChart() const { return launches_chart_; }
    QChart* shareChart() const { return share_chart_; }
    // The series of a process that is running now (nullptr when it is not in the last sample).
    QLineSeries* launchesSeries(int pid, std::uint64_t start_time) const;
    QAreaSeries* shareSeries(int pid, std::uint64_t start_time) const;
    QAreaSeries* unownedSeries() const { return unowned_; }

private:
    struct Track;
    using Key = std::pair<int, std::uint64_t>;

    Track& start_track(const Key& key, const ProcessSample& sample);
    void drop_old_points(qint64 cutoff);
    void update_launches_axis(qint64 now, double newest_max);

    QChart* launches_chart_;
    QChart* share_chart_;
    QChartView* launches_view_;
    QChartView* share_view_;
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
    qint64 last_ms_ = -1;
};

}  // namespace gpupart::widgets
