// The chart pieces ChartsPanel builds its two charts from (chart_series.hpp).
#include "chart_series.hpp"

#include <QChart>
#include <QDateTimeAxis>
#include <QLegend>
#include <QLegendMarker>
#include <QValueAxis>
#include <QXYSeries>

namespace gpupart::widgets {

namespace {

constexpr qint64 kPruneSlackMs = 10'000;  // points are dropped in batches, this long after they leave

}  // namespace

QDateTimeAxis* add_time_axis(QChart* chart) {
    auto* axis = new QDateTimeAxis;
    axis->setFormat(QStringLiteral("HH:mm:ss"));
    axis->setTickCount(6);  // a tick a minute over the five-minute window
    chart->addAxis(axis, Qt::AlignBottom);
    return axis;
}

QValueAxis* add_value_axis(QChart* chart, const QString& title, const QString& format) {
    auto* axis = new QValueAxis;
    axis->setTitleText(title);
    axis->setLabelFormat(format);
    axis->setTickType(QValueAxis::TicksDynamic);  // ticks at round values from 0, whatever the range
    axis->setTickAnchor(0);
    chart->addAxis(axis, Qt::AlignLeft);
    return axis;
}

QChart* make_chart(const QString& title) {
    auto* chart = new QChart;
    chart->setTitle(title);
    chart->setAnimationOptions(QChart::NoAnimation);  // animating every 250 ms sample would never settle
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(4, 4, 4, 4));
    return chart;
}


// Drops points that have left the window, but keeps the newest of them so the line still enters at
// the left edge (the axis clips it). Runs only once the second point is kPruneSlackMs out: each call
// costs Qt Charts a geometry update of the whole series, so it happens every ~10 s, not every sample.
void drop_before(QXYSeries* series, qint64 cutoff) {
    const auto edge = static_cast<double>(cutoff);
    const int count = series->count();
    if (count < 2 || series->at(1).x() >= edge - static_cast<double>(kPruneSlackMs)) return;
    int old = 0;
    while (old + 1 < count && series->at(old + 1).x() < edge) ++old;
    series->removePoints(0, old);
}

// Shares change only when partitions do: a sample equal to the two points before it moves the last
// point forward instead of adding one, so a steady share is two points however long it lasts.
void append_step(QXYSeries* series, double x, double y) {
    const int count = series->count();
    if (count >= 2 && series->at(count - 1).y() == y && series->at(count - 2).y() == y)
        series->replace(count - 1, QPointF(x, y));
    else
        series->append(x, y);
}

void hide_legend_entry(QChart* chart, QAbstractSeries* series) {
    for (QLegendMarker* marker : chart->legend()->markers(series)) marker->setVisible(false);
}


}  // namespace gpupart::widgets
