#pragma once
// The GPU's power (W, left axis) and SM clock (MHz, right axis) over the last five minutes, one point a
// refresh, from NVML (backend/sources/gpu_meters.hpp). Spatial partitions do not isolate power: when a
// neighbour heats the GPU the clock of every partition falls, which is what slows a partitioned process
// beside a compute-heavy one (README, "Evidence"). This chart shows it happen. Without NVML (a recording, the
// demo) it stays empty and its title says why.
#include <optional>

#include <QString>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QChart;
class QDateTimeAxis;
class QLineSeries;
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

private:
    QChart* chart_;
    QLineSeries* power_;
    QLineSeries* clock_;
    QDateTimeAxis* time_;
    QValueAxis* watts_;
    QValueAxis* mhz_;
};

}  // namespace gpupart::widgets
