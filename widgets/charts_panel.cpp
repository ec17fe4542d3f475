#include "charts_panel.hpp"

#include <algorithm>
#include <cmath>

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QFontMetricsF>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QSplitter>
#include <QVBoxLayout>
#include <QValueAxis>

#include "chart_series.hpp"
#include "chart_ticks.hpp"
#include "owner_colors.hpp"

namespace gpupart::widgets {

// One process's series. A process that ends keeps its track (its history stays on screen) until its
// last point leaves the window.
struct ChartsPanel::Track {
    Key key;
    QString label;
    QLineSeries* launches = nullptr;  // in the launches chart
    QLineSeries* lower = nullptr;     // the share area's bottom: what the processes below hold
    QLineSeries* upper = nullptr;     // its top: that plus this process's share
    QAreaSeries* area = nullptr;      // in the share chart
    bool running = true;
    bool listed = true;  // has its own entry in the launches legend (a process back on screen reuses its first)
    // The launch rate is drawn one point a second (the mean of that second's samples, the newest
    // moving with each sample): a quarter of the points at 4 Hz, and Qt Charts' cost grows with them.
    qint64 bucket = -1;
    double bucket_sum = 0;
    int bucket_samples = 0;
};

namespace {

constexpr qint64 kBucketMs = 1000;   // launch-rate resolution on screen
const QString kLaunchesTitle = QStringLiteral("Kernel launches per second");

}  // namespace

ChartsPanel::ChartsPanel(QWidget* parent)
    : QWidget(parent),
      launches_chart_(make_chart(kLaunchesTitle)),
      share_chart_(make_chart(QStringLiteral("TPC share over time (stacked)"))),
      launches_view_(new QChartView(launches_chart_)),
      share_view_(new QChartView(share_chart_)),
      splitter_(new QSplitter(Qt::Vertical, this)),
      launches_time_(add_time_axis(launches_chart_)),
      share_time_(add_time_axis(share_chart_)),
      launches_axis_(add_value_axis(launches_chart_, QStringLiteral("launches/s"), QStringLiteral("%.0f"))),
      share_axis_(add_value_axis(share_chart_, QStringLiteral("% of TPCs"), QStringLiteral("%.0f%%"))),
      unowned_lower_(new QLineSeries(share_chart_)),
      unowned_upper_(new QLineSeries(share_chart_)),
      unowned_(new QAreaSeries(unowned_upper_, unowned_lower_)) {
    for (QChartView* view : {launches_view_, share_view_}) view->setRenderHint(QPainter::Antialiasing);
    share_axis_->setRange(0, 100);
    share_axis_->setTickInterval(25);
    // TPCs no process holds: the rest of the stack, grey as in the floorplan.
    unowned_->setName(QStringLiteral("TPCs no process holds"));
    unowned_->setColor(unowned_color());
    unowned_->setBorderColor(unowned_color().darker(115));
    share_chart_->addSeries(unowned_);
    unowned_->attachAxis(share_time_);
    unowned_->attachAxis(share_axis_);
    // The process names are in the launches chart's legend, in the same colours; the share chart's
    // legend names only the grey. Both below their plots, so the two time axes line up.
    launches_chart_->legend()->setAlignment(Qt::AlignBottom);
    share_chart_->legend()->setAlignment(Qt::AlignBottom);

    connect(launches_chart_, &QChart::plotAreaChanged, this, &ChartsPanel::fit_ticks);
    connect(share_chart_, &QChart::plotAreaChanged, this, &ChartsPanel::fit_ticks);
    connect(launches_chart_, &QGraphicsWidget::geometryChanged, this, &ChartsPanel::fit_legend);

    splitter_->addWidget(launches_view_);
    splitter_->addWidget(share_view_);
    splitter_->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(splitter_);
    clear();
}

ChartsPanel::~ChartsPanel() = default;

ChartsPanel::Track& ChartsPanel::start_track(const Key& key, const ProcessSample& sample) {
    auto track = std::make_unique<Track>();
    track->key = key;
    track->label = sample.label;
    const QColor color = owner_color(key.first, key.second);

    track->launches = new QLineSeries;
    track->launches->setName(sample.label);
    track->launches->setPen(QPen(color, 2.5));  // the palette is light (made to sit behind text): a wider line reads on white
    launches_chart_->addSeries(track->launches);
    track->launches->attachAxis(launches_time_);
    track->launches->attachAxis(launches_axis_);

    track->lower = new QLineSeries(share_chart_);
    track->upper = new QLineSeries(share_chart_);
    track->area = new QAreaSeries(track->upper, track->lower);
    track->area->setName(sample.label);
    track->area->setColor(color);
    track->area->setBorderColor(color.darker(130));
    share_chart_->addSeries(track->area);
    track->area->attachAxis(share_time_);
    track->area->attachAxis(share_axis_);
    hide_legend_entry(share_chart_, track->area);
    // A process that comes back while its earlier line is still on screen gets one legend entry, not two.
    const bool listed = std::any_of(tracks_.begin(), tracks_.end(), [&](const auto& t) { return t->key == key; });
    if (listed) {
        hide_legend_entry(launches_chart_, track->launches);
        track->listed = false;
    }
    if (catching_up_)  // quiet like the others until catch_up draws them all at once
        for (QXYSeries* series : {static_cast<QXYSeries*>(track->launches), static_cast<QXYSeries*>(track->lower),
                                  static_cast<QXYSeries*>(track->upper)})
            series->blockSignals(true);

    tracks_.push_back(std::move(track));
    return *tracks_.back();
}

void ChartsPanel::addSample(qint64 msecs_since_epoch, const std::vector<ProcessSample>& processes) {
    if (msecs_since_epoch < last_ms_) return;
    last_ms_ = msecs_since_epoch;
    // Every sample waits in the queue first; the window's worth is kept (and the newest sample before it, so
    // lines still enter at the left edge once drawn).
    pending_.emplace_back(msecs_since_epoch, processes);
    const qint64 cutoff = msecs_since_epoch - kWindowMs;
    while (pending_.size() > 1 && pending_[1].first < cutoff) pending_.pop_front();
    // Off screen nothing is drawn. On screen the charts are drawn once a second, at the first sample of a
    // new second (launch rates are a point a second anyway): Qt Charts recomputes every changed series'
    // whole geometry at each draw, which at 4 Hz with 15 processes cost more than anything else in the window.
    if (!onScreen() || msecs_since_epoch / 1000 == drawn_second_) return;
    drawNow();
}

void ChartsPanel::drawNow() {
    drawn_second_ = last_ms_ / 1000;
    catch_up();
}

void ChartsPanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (onScreen()) drawNow();
}

void ChartsPanel::setOnScreen(bool on_screen) {
    on_screen_ = on_screen;
    if (onScreen()) drawNow();
}

// The samples that waited (since the last draw, or while hidden), in one pass: every series' signals are blocked while they are
// applied (Qt Charts would otherwise recompute a series' geometry at each point), then each series
// tells its chart once that all its points changed.
void ChartsPanel::catch_up() {
    if (pending_.empty()) return;
    const auto all_series = [this] {
        std::vector<QXYSeries*> series{unowned_lower_, unowned_upper_};
        for (const auto& track : tracks_) series.insert(series.end(), {track->launches, track->lower, track->upper});
        return series;
    };
    for (QXYSeries* series : all_series()) series->blockSignals(true);
    catching_up_ = true;  // start_track blocks the series it makes
    for (const auto& [msecs, processes] : pending_) apply_sample(msecs, processes);
    catching_up_ = false;
    pending_.clear();
    for (QXYSeries* series : all_series()) {
        series->blockSignals(false);
        series->replace(series->points());
    }
    for (const auto& track : tracks_) {  // names that changed while blocked reach the legend now
        if (track->launches->name() != track->label) track->launches->setName(track->label);
        if (track->area->name() != track->label) track->area->setName(track->label);
    }
    update_axes();
    fit_legend();
}

// Qt Charts puts a legend in one row and cuts every label to fit it ("7..." with 15 processes in half a
// dock). When the whole labels do not fit, the legend names each process by its pid alone; when even those
// do not, it goes and the title says where the colours are explained (the process table and the floorplan's
// legend give each process's colour, with its command).
void ChartsPanel::fit_legend() {
    QLegend* legend = launches_chart_->legend();
    const QFontMetricsF metrics(legend->font());
    const double room = launches_chart_->size().width() - 20;  // the legend's row: the chart less its margins
    double names = 0;
    double pids = 0;
    for (const auto& track : tracks_) {
        if (!track->listed) continue;
        names += metrics.horizontalAdvance(track->label) + 40;  // swatch and spacing
        pids += metrics.horizontalAdvance(QString::number(track->key.first)) + 40;
    }
    const bool pids_only = names > room;
    const bool shown = pids <= room;
    for (const auto& track : tracks_) {
        const QString text = pids_only ? QString::number(track->key.first) : track->label;
        for (QLegendMarker* marker : legend->markers(track->launches))
            if (marker->label() != text) marker->setLabel(text);
    }
    if (legend->isVisible() != shown) {
        legend->setVisible(shown);
        launches_chart_->setTitle(shown ? kLaunchesTitle : kLaunchesTitle + QStringLiteral(" (colours as in the process table)"));
    }
}

void ChartsPanel::apply_sample(qint64 msecs_since_epoch, const std::vector<ProcessSample>& processes) {
    const auto now = static_cast<double>(msecs_since_epoch);
    std::map<Key, const ProcessSample*> present;
    for (const ProcessSample& sample : processes) present.emplace(Key{sample.pid, sample.start_time}, &sample);
    for (auto it = running_.begin(); it != running_.end();) {
        if (present.count(it->first) == 0) {
            it->second->running = false;  // ended: its series stop at their last point
            it = running_.erase(it);
        } else {
            ++it;
        }
    }
    for (const auto& [key, sample] : present)
        if (running_.count(key) == 0) running_.emplace(key, &start_track(key, *sample));

    // Stack the shares in the order processes first appeared, so areas do not swap places.
    double stacked = 0;
    double peak = 0;
    for (const auto& track : tracks_) {
        if (!track->running) continue;
        const ProcessSample& sample = *present.at(track->key);
        if (sample.label != track->label) {
            track->label = sample.label;
            if (!catching_up_) {  // blocked series would not tell the legend: catch_up renames them after
                track->launches->setName(sample.label);
                track->area->setName(sample.label);
            }
        }
        const double launches = std::max(0.0, sample.launches_per_second);
        const double top = std::min(1.0, stacked + std::clamp(sample.tpc_share, 0.0, 1.0));
        const qint64 bucket = msecs_since_epoch / kBucketMs;
        if (bucket == track->bucket) {
            track->bucket_sum += launches;
            ++track->bucket_samples;
            track->launches->replace(track->launches->count() - 1, QPointF(now, track->bucket_sum / track->bucket_samples));
        } else {
            track->bucket = bucket;
            track->bucket_sum = launches;
            track->bucket_samples = 1;
            track->launches->append(now, launches);
        }
        append_step(track->lower, now, stacked * 100);
        append_step(track->upper, now, top * 100);
        stacked = top;
        peak = std::max(peak, launches);
    }
    append_step(unowned_lower_, now, stacked * 100);
    append_step(unowned_upper_, now, 100);
    drop_old_points(msecs_since_epoch - kWindowMs);

    // The largest launch rate of each sample still in the window, kept decreasing (a sliding-window maximum).
    while (!launch_peaks_.empty() && launch_peaks_.back().second <= peak) launch_peaks_.pop_back();
    launch_peaks_.emplace_back(msecs_since_epoch, peak);
    while (launch_peaks_.front().first < msecs_since_epoch - kWindowMs) launch_peaks_.pop_front();
}

void ChartsPanel::drop_old_points(qint64 cutoff) {
    drop_before(unowned_lower_, cutoff);
    drop_before(unowned_upper_, cutoff);
    for (auto it = tracks_.begin(); it != tracks_.end();) {
        Track& track = **it;
        drop_before(track.launches, cutoff);
        drop_before(track.lower, cutoff);
        drop_before(track.upper, cutoff);
        const int points = track.launches->count();
        if (track.running || (points > 0 && track.launches->at(points - 1).x() >= static_cast<double>(cutoff))) {
            ++it;
            continue;
        }
        // An ended process whose last point has scrolled out: its series go.
        launches_chart_->removeSeries(track.launches);
        share_chart_->removeSeries(track.area);
        delete track.launches;
        delete track.area;
        delete track.lower;
        delete track.upper;
        it = tracks_.erase(it);
    }
}

void ChartsPanel::update_axes() {
    // The time axes end at the next whole second and move only when it changes: their labels are laid
    // out (text measured, items placed) at each move, which at 4 Hz cost more than the series themselves.
    const qint64 end = (last_ms_ / 1000 + (last_ms_ % 1000 != 0 ? 1 : 0)) * 1000;
    if (end != axis_end_ms_) {
        axis_end_ms_ = end;
        const QDateTime from = QDateTime::fromMSecsSinceEpoch(end - kWindowMs);
        const QDateTime to = QDateTime::fromMSecsSinceEpoch(end);
        launches_time_->setRange(from, to);
        share_time_->setRange(from, to);
    }
    // Headroom above the highest line, never below 10/s so an idle GPU does not draw noise full height.
    const double wanted = std::max(10.0, (launch_peaks_.empty() ? 0.0 : launch_peaks_.front().second) * 1.1);
    const double step = nice_step(wanted, launches_intervals_);
    const double top = std::ceil(wanted / step) * step;
    if (top == launches_top_ && step == launches_axis_->tickInterval()) return;  // relayout only on a change
    launches_top_ = top;
    launches_axis_->setTickInterval(step);
    launches_axis_->setRange(0, top);
}

void ChartsPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    // Two charts stacked in a bottom dock (wide, short) get ~100 px of plot each, too little for their
    // labels; side by side each gets the dock's whole height.
    const Qt::Orientation wanted = width() > 2 * height() ? Qt::Horizontal : Qt::Vertical;
    if (splitter_->orientation() != wanted) {
        splitter_->setOrientation(wanted);
        const int half = (wanted == Qt::Horizontal ? width() : height()) / 2;
        splitter_->setSizes({half, half});
    }
}

// As many value ticks as the plots have room for (a label every ~28 px): in a short dock Qt Charts would
// otherwise overlap the labels and cut each to "...".
void ChartsPanel::fit_ticks() {
    const double launches_height = launches_chart_->plotArea().height();
    const int intervals = std::clamp(static_cast<int>(launches_height / 28), 1, 4);
    if (intervals != launches_intervals_) {
        launches_intervals_ = intervals;
        launches_top_ = 0;  // recompute the step
        update_axes();
    }
    const double share_height = share_chart_->plotArea().height();
    const double share_step = share_height >= 4 * 28 ? 25 : share_height >= 2 * 28 ? 50 : 100;
    if (share_axis_->tickInterval() != share_step) share_axis_->setTickInterval(share_step);
    // Qt Charts cuts a title longer than its axis to "laun...": show it whole or not at all.
    for (auto [axis, height] : {std::pair{launches_axis_, launches_height}, std::pair{share_axis_, share_height}}) {
        const bool fits = QFontMetricsF(axis->titleFont()).horizontalAdvance(axis->titleText()) + 8 <= height;
        if (axis->isTitleVisible() != fits) axis->setTitleVisible(fits);
    }
}

void ChartsPanel::clear() {
    for (const auto& track : tracks_) {
        track->running = false;
        track->launches->clear();
    }
    running_.clear();
    drop_old_points(0);  // every track is ended and has no point left: all go
    unowned_lower_->clear();
    unowned_upper_->clear();
    pending_.clear();
    launch_peaks_.clear();
    last_ms_ = -1;
    drawn_second_ = -1;
    axis_end_ms_ = -1;
    const QDateTime now = QDateTime::currentDateTime();
    launches_time_->setRange(now.addMSecs(-kWindowMs), now);
    share_time_->setRange(now.addMSecs(-kWindowMs), now);
    launches_top_ = 10;
    launches_axis_->setTickInterval(nice_step(launches_top_, launches_intervals_));
    launches_axis_->setRange(0, launches_top_);
}

QLineSeries* ChartsPanel::launchesSeries(int pid, std::uint64_t start_time) const {
    const auto it = running_.find({pid, start_time});
    return it == running_.end() ? nullptr : it->second->launches;
}

QAreaSeries* ChartsPanel::shareSeries(int pid, std::uint64_t start_time) const {
    const auto it = running_.find({pid, start_time});
    return it == running_.end() ? nullptr : it->second->area;
}

}  // namespace gpupart::widgets
