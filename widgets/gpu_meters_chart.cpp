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

// Drops the points older than `cutoff`, keeping the newest of them so the line reaches the left edge.
void drop_before(QLineSeries* series, qint64 cutoff) {
    int old = 0;
    while (old + 1 < series->count() && series->at(old + 1).x() < static_cast<double>(cutoff)) ++old;
    if (old > 0) series->removePoints(0, old);
}

double top_of(const QLineSeries* series, double floor) {
    double top = floor;
    for (const QPointF& point : series->points()) top = std::max(top, point.y());
    return top;
}

}  // namespace

GpuMetersChart::GpuMetersChart(QWidget* parent) : QWidget(parent), chart_(new QChart), power_(new QLineSeries), clock_(new QLineSeries) {
    chart_->setTitle("GPU power and SM clock (NVML)");
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
    chart_->setTitle("GPU power and SM clock (NVML)");
    if (watts) power_->append(static_cast<double>(msecs), *watts);
    if (sm_mhz) clock_->append(static_cast<double>(msecs), *sm_mhz);
    drop_before(power_, msecs - kWindowMs);
    drop_before(clock_, msecs - kWindowMs);
    // The scales are the GPU's own limits where NVML gives them, so a fall of the clock reads as a fall.
    watts_->setRange(0, power_limit_watts.value_or(top_of(power_, 100)));
    mhz_->setRange(0, max_sm_mhz ? static_cast<double>(*max_sm_mhz) : top_of(clock_, 2000));
    time_->setRange(QDateTime::fromMSecsSinceEpoch(msecs - kWindowMs), QDateTime::fromMSecsSinceEpoch(msecs));
}

void GpuMetersChart::setUnavailable(const QString& why) {
    chart_->setTitle(QString("GPU power and SM clock: %1").arg(why));
    power_->clear();
    clock_->clear();
}

}  // namespace gpupart::widgets
