#pragma once
// The GPU's power (W, left axis) and SM clock (MHz, right axis) over the last five minutes, one point a
// refresh, from NVML (backend/sources/gpu_meters.hpp). Spatial partitions do not isolate power: when a
// neighbour heats the GPU the clock of every partition falls, which is what slows a partitioned process
// beside a compute-heavy one (README, "Evidence"). This chart shows it happen. Without NVML (a recording, the
// demo) it stays empty and its title says why. While the chart is not on screen (its dock tab not raised) a
// sample only updates the points kept here; the series take them in one step when the chart is shown.
#include <optional>

#include <QList>
#include <QPointF>

#include <QString>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QChart;
class QDateTimeAxis;
class QLineSeries;
class QShowEvent;
class QValueAxis;
QT_END_NAMESPACE

namespace gpupart::widgets {

class GpuMetersChart : public QWidget {
    Q_OBJECT
public:
    static constexpr qint64 kWindowMs = 5 * 60 * 1000;

    explicit GpuMetersChart(QWidget* parent = nullptr);

    // One sample; a missing reading adds no point to its line. Points older than the window are dropped.
    void addSample(qint64 msecs_since_epoch, std::optional<double> watts, std::optional<int> sm_mhz,
                   std::optional<double> power_limit_watts, std::optional<int> max_sm_mhz);
    // No meters: the chart says why (one line) instead of showing lines.
    void setUnavailable(const QString& why);

    QChart* chart() const { return chart_; }
    QLineSeries* powerSeries() const { return power_; }
    QLineSeries* clockSeries() const { return clock_; }
    // As ChartsPanel::setOnScreen: false while its dock tab is not raised; true brings the series up to date.
    void setOnScreen(bool on_screen);
    bool onScreen() const { return on_screen_ && isVisible(); }

protected:
    void showEvent(QShowEvent* event) override;

private:
    void sync_series();
    void show_ranges();

    QChart* chart_;
    QLineSeries* power_;
    QLineSeries* clock_;
    QDateTimeAxis* time_;
    QValueAxis* watts_;
    QValueAxis* mhz_;
    QString unavailable_;  // the reason shown in the title, empty while NVML gives meters
    // The window's points, kept whether or not the chart is on screen; the series lag while it is hidden.
    QList<QPointF> power_points_;
    QList<QPointF> clock_points_;
    double watts_top_ = 100;
    double mhz_top_ = 2000;
    qint64 last_ms_ = 0;
    bool series_stale_ = false;
    bool on_screen_ = true;
};

}  // namespace gpupart::widgets
