#include "gpu_meters_chart.hpp"

#include <algorithm>

#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QLineSeries>
#include <QPen>
#include <QVBoxLayout>
#include <QValueAxis>

namespace gpupart::widgets {
namespace {

const QString kTitle = QStringLiteral("GPU power and SM clock (NVML)");
constexpr qint64 kPruneSlackMs = 10'000;  // points that left the window go in batches, not one a sample

// How many points at the front are older than `cutoff`, less the newest of them (kept so the line reaches
// the left edge); 0 until the second point is kPruneSlackMs out.
int old_points(const QList<QPointF>& points, qint64 cutoff) {
    const auto edge = static_cast<double>(cutoff);
    if (points.size() < 2 || points[1].x() >= edge - static_cast<double>(kPruneSlackMs)) return 0;
    int old = 0;
    while (old + 1 < points.size() && points[old + 1].x() < edge) ++old;
    return old;
}

double top_of(const QList<QPointF>& points, double floor) {
    double top = floor;
    for (const QPointF& point : points) top = std::max(top, point.y());
    return top;
}

}  // namespace

GpuMetersChart::GpuMetersChart(QWidget* parent) : QWidget(parent), chart_(new QChart), power_(new QLineSeries), clock_(new QLineSeries) {
    chart_->setTitle(kTitle);
    chart_->setAnimationOptions(QChart::NoAnimation);
    chart_->setBackgroundRoundness(0);
    chart_->setMargins(QMargins(4, 4, 4, 4));
    power_->setName("power (W)");
    clock_->setName("SM clock (MHz)");
    power_->setPen(QPen(QColor(0xd6, 0x27, 0x28), 2));
    clock_->setPen(QPen(QColor(0x1f, 0x77, 0xb4), 2));
    chart_->addSeries(power_);
    chart_->addSeries(clock_);
    time_ = new QDateTimeAxis;
    time_->setFormat(QStringLiteral("HH:mm:ss"));
    time_->setTickCount(6);
    chart_->addAxis(time_, Qt::AlignBottom);
    watts_ = new QValueAxis;
    watts_->setTitleText("W");
    watts_->setLabelFormat("%.0f");
    watts_->setRange(0, 100);
    chart_->addAxis(watts_, Qt::AlignLeft);
    mhz_ = new QValueAxis;
    mhz_->setTitleText("MHz");
    mhz_->setLabelFormat("%.0f");
    mhz_->setRange(0, 2000);
    chart_->addAxis(mhz_, Qt::AlignRight);
    power_->attachAxis(time_);
    power_->attachAxis(watts_);
    clock_->attachAxis(time_);
    clock_->attachAxis(mhz_);
    auto* view = new QChartView(chart_, this);
    view->setRenderHint(QPainter::Antialiasing);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    time_->setRange(QDateTime::fromMSecsSinceEpoch(now - kWindowMs), QDateTime::fromMSecsSinceEpoch(now));
}

void GpuMetersChart::addSample(qint64 msecs, std::optional<double> watts, std::optional<int> sm_mhz,
                               std::optional<double> power_limit_watts, std::optional<int> max_sm_mhz) {
    if (!unavailable_.isEmpty()) {
        unavailable_.clear();
        chart_->setTitle(kTitle);
    }
    const auto x = static_cast<double>(msecs);
    const qint64 cutoff = msecs - kWindowMs;
    if (watts) power_points_.append(QPointF(x, *watts));
    if (sm_mhz) clock_points_.append(QPointF(x, *sm_mhz));
    const int old_power = old_points(power_points_, cutoff);
    const int old_clock = old_points(clock_points_, cutoff);
    power_points_.remove(0, old_power);
    clock_points_.remove(0, old_clock);
    // The scales are the GPU's own limits where NVML gives them, so a fall of the clock reads as a fall.
    watts_top_ = power_limit_watts.value_or(top_of(power_points_, 100));
    mhz_top_ = max_sm_mhz ? static_cast<double>(*max_sm_mhz) : top_of(clock_points_, 2000);
    last_ms_ = msecs;
    if (!onScreen()) {
        series_stale_ = true;
        return;
    }
    if (series_stale_) {
        sync_series();
        return;
    }
    if (watts) power_->append(x, *watts);
    if (sm_mhz) clock_->append(x, *sm_mhz);
    if (old_power > 0) power_->removePoints(0, old_power);
    if (old_clock > 0) clock_->removePoints(0, old_clock);
    show_ranges();
}

void GpuMetersChart::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (series_stale_ && onScreen()) sync_series();
}

void GpuMetersChart::setOnScreen(bool on_screen) {
    on_screen_ = on_screen;
    if (series_stale_ && onScreen()) sync_series();
}

void GpuMetersChart::sync_series() {
    series_stale_ = false;
    power_->replace(power_points_);
    clock_->replace(clock_points_);
    show_ranges();
}

void GpuMetersChart::show_ranges() {
    if (watts_->max() != watts_top_) watts_->setRange(0, watts_top_);
    if (mhz_->max() != mhz_top_) mhz_->setRange(0, mhz_top_);
    // The time axis ends at the next whole second and moves once a second (its labels are laid out at each move).
    const qint64 end = (last_ms_ / 1000 + (last_ms_ % 1000 != 0 ? 1 : 0)) * 1000;
    if (time_->max().toMSecsSinceEpoch() != end)
        time_->setRange(QDateTime::fromMSecsSinceEpoch(end - kWindowMs), QDateTime::fromMSecsSinceEpoch(end));
}

void GpuMetersChart::setUnavailable(const QString& why) {
    // Called at every refresh while NVML gives nothing: the title and the empty lines change only once.
    if (why == unavailable_) return;
    unavailable_ = why;
    chart_->setTitle(QString("GPU power and SM clock: %1").arg(why));
    power_points_.clear();
    clock_points_.clear();
    power_->clear();
    clock_->clear();
    series_stale_ = false;
}

}  // namespace gpupart::widgets
