#pragma once
// The pieces of the charts panel's two charts: axes, a chart, and the two ways its series grow and shrink
// (charts_panel.cpp draws with them).
#include <QString>
#include <QtGlobal>

class QAbstractSeries;
class QChart;
class QDateTimeAxis;
class QValueAxis;
class QXYSeries;

namespace gpupart::widgets {

// A time axis along the bottom (HH:mm:ss, a tick a minute over the five-minute window).
QDateTimeAxis* add_time_axis(QChart* chart);

// A value axis on the left with `title`, labels in `format`, ticks at round values from 0.
QValueAxis* add_value_axis(QChart* chart, const QString& title, const QString& format);

// A chart with `title`, no animation, square and with small margins.
QChart* make_chart(const QString& title);

// Drops points that have left the window (before `cutoff`, in ms since the epoch), keeping the newest of
// them so the line still enters at the left edge; only once the second point is 10 s out (each call costs
// Qt Charts a geometry update of the whole series).
void drop_before(QXYSeries* series, qint64 cutoff);

// Appends (x, y), or moves the last point forward when the two points before it already hold y: a
// steady share is two points however long it lasts.
void append_step(QXYSeries* series, double x, double y);

// Hides `series`' entries in the chart's legend.
void hide_legend_entry(QChart* chart, QAbstractSeries* series);

}  // namespace gpupart::widgets
