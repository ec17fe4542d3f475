// ChartsPanel with synthetic times: the five-minute window drops old points, processes that leave end
// their series (which go once scrolled out), launch rates are a point a second and steady shares two
// points, the share stack adds up to 100% with the unowned rest on top, colours are the owners'
// colours, and the launches axis follows the highest visible rate.
#include <cmath>

#include <QAreaSeries>
#include <QChart>
#include <QDateTimeAxis>
#include <QLegendMarker>
#include <QFontMetricsF>
#include <QLineSeries>
#include <QSplitter>
#include <QTest>
#include <QValueAxis>

#include "charts_panel.hpp"
#include "owner_colors.hpp"
#include "screenshot.hpp"

using namespace gpupart::widgets;

namespace {

constexpr qint64 kStart = 1'790'000'000'000;  // a fixed moment: the test never reads the clock
constexpr qint64 kSecond = 1000;
constexpr qint64 kMinute = 60 * kSecond;

ProcessSample process(int pid, double launches, double share) {
    return {pid, static_cast<std::uint64_t>(pid) * 7, QStringLiteral("%1 worker").arg(pid), launches, share};
}

QValueAxis* value_axis(QChart* chart) { return qobject_cast<QValueAxis*>(chart->axes(Qt::Vertical).at(0)); }
QDateTimeAxis* time_axis(QChart* chart) { return qobject_cast<QDateTimeAxis*>(chart->axes(Qt::Horizontal).at(0)); }

// The points a chart shows (those from `from` on); the one point kept before it only sets where the line enters.
QList<QPointF> shown(const QXYSeries* series, qint64 from) {
    QList<QPointF> points;
    for (const QPointF& point : series->points())
        if (point.x() >= static_cast<double>(from)) points.append(point);
    return points;
}

int series_named(QChart* chart, const QString& name) {
    int count = 0;
    for (QAbstractSeries* series : chart->series()) count += series->name() == name ? 1 : 0;
    return count;
}

}  // namespace

class TestChartsPanel : public QObject {
    Q_OBJECT
private slots:
    // Each test starts as a fresh GUI does: no colour handed out yet (the GUI frees those of ended
    // processes on every refresh; twelve hues would otherwise run out across these tests).
    void init() { update_owner_letters({}); }

    void windowDropsOldPointsAndEndedProcessesGo() {
        ChartsPanel panel;
        panel.show();  // a panel not on screen only queues its samples (hiddenPanelQueuesAndCatchesUp)
        // Ten minutes at one sample a second: A and B throughout, C for the first three minutes,
        // D from minute six.
        for (qint64 s = 0; s <= 600; ++s) {
            std::vector<ProcessSample> samples = {process(101, 100, 0.25), process(102, 50, 0.25)};
            if (s <= 180) samples.push_back(process(103, 10, 0.1));
            if (s >= 360) samples.push_back(process(104, 20, 0.2));
            panel.addSample(kStart + s * kSecond, samples);
            // At every moment: the line reaches the left edge (one point before the window), and no
            // point before that is more than 10 s older than the window (they go in batches).
            const auto cutoff = static_cast<double>(kStart + s * kSecond - ChartsPanel::kWindowMs);
            QLineSeries* a = panel.launchesSeries(101, 707);
            if (s > 300) {
                QVERIFY(a->at(0).x() < cutoff);
                QVERIFY(a->at(1).x() >= cutoff - 10 * kSecond);
            }
            if (s == 200) {
                // C ended at 180 s: no running series, but its history is still drawn.
                QCOMPARE(panel.launchesSeries(103, 721), nullptr);
                QCOMPARE(series_named(panel.launchesChart(), QStringLiteral("103 worker")), 1);
            }
            // C's last point (180 s) is on the window's edge at 480 s and out of it a second later:
            // then its series go from both charts.
            if (s == 480) QCOMPARE(series_named(panel.launchesChart(), QStringLiteral("103 worker")), 1);
            if (s == 481) {
                QCOMPARE(series_named(panel.launchesChart(), QStringLiteral("103 worker")), 0);
                QCOMPARE(series_named(panel.shareChart(), QStringLiteral("103 worker")), 0);
            }
        }
        const qint64 now = kStart + 600 * kSecond;
        QLineSeries* a = panel.launchesSeries(101, 707);
        QVERIFY(a != nullptr);
        // One point a second, from the one just before the window to now.
        QCOMPARE(a->at(a->count() - 1).x(), static_cast<double>(now));
        QCOMPARE(static_cast<qint64>(a->count()), (now - static_cast<qint64>(a->at(0).x())) / kSecond + 1);
        // A's share never changed: its area is two points, the first from the start, the last now.
        QLineSeries* a_top = panel.shareSeries(101, 707)->upperSeries();
        QCOMPARE(a_top->count(), 2);
        QCOMPARE(a_top->at(0), QPointF(static_cast<double>(kStart), 25.0));
        QCOMPARE(a_top->at(1), QPointF(static_cast<double>(now), 25.0));
        QLineSeries* d = panel.launchesSeries(104, 728);
        QCOMPARE(d->count(), 241);
        QCOMPARE(d->at(0).x(), static_cast<double>(kStart + 360 * kSecond));
        QCOMPARE(panel.launchesChart()->series().size(), 3);
        QCOMPARE(panel.shareChart()->series().size(), 4);  // three processes and the unowned rest
        QCOMPARE(time_axis(panel.launchesChart())->min().toMSecsSinceEpoch(), now - ChartsPanel::kWindowMs);
        QCOMPARE(time_axis(panel.shareChart())->max().toMSecsSinceEpoch(), now);
    }

    void launchRatesAreDrawnOnePointASecond() {
        ChartsPanel panel;
        panel.show();
        const qint64 t0 = kStart + 10 * kSecond;  // on a second boundary
        for (int i = 0; i < 4; ++i) panel.addSample(t0 + i * 250, {process(501, 10.0 * (i + 1), 0.1)});
        QLineSeries* line = panel.launchesSeries(501, 3507);
        // Drawn at the second's first sample; the other three wait for the next second (or drawNow).
        QCOMPARE(line->at(0), QPointF(static_cast<double>(t0), 10.0));
        QCOMPARE(panel.pendingSamples(), 3);
        panel.drawNow();
        QCOMPARE(line->count(), 1);
        QCOMPARE(line->at(0), QPointF(static_cast<double>(t0 + 750), 25.0));  // the mean of 10, 20, 30, 40, at the newest time
        panel.addSample(t0 + kSecond, {process(501, 50, 0.1)});  // a new second: drawn at once
        QCOMPARE(panel.pendingSamples(), 0);
        QCOMPARE(line->count(), 2);
        QCOMPARE(line->at(1), QPointF(static_cast<double>(t0 + kSecond), 50.0));
    }

    void sharesStackToAHundredPercent() {
        ChartsPanel panel;
        panel.show();
        panel.addSample(kStart, {process(201, 5, 0.5), process(202, 5, 0.125)});
        panel.addSample(kStart + 250, {process(202, 5, 0.125), process(201, 5, 0.5), process(203, 5, 0.25)});
        panel.drawNow();  // samples within one second wait for the next; these tests look at each
        // Stacked in order of first appearance: 201 at the bottom, then 202, 203, then the unowned rest.
        const auto last = [](QLineSeries* s) { return s->at(s->count() - 1).y(); };
        QCOMPARE(last(panel.shareSeries(201, 1407)->lowerSeries()), 0.0);
        QCOMPARE(last(panel.shareSeries(201, 1407)->upperSeries()), 50.0);
        QCOMPARE(last(panel.shareSeries(202, 1414)->lowerSeries()), 50.0);
        QCOMPARE(last(panel.shareSeries(202, 1414)->upperSeries()), 62.5);
        QCOMPARE(last(panel.shareSeries(203, 1421)->lowerSeries()), 62.5);
        QCOMPARE(last(panel.shareSeries(203, 1421)->upperSeries()), 87.5);
        QCOMPARE(last(panel.unownedSeries()->lowerSeries()), 87.5);
        QCOMPARE(last(panel.unownedSeries()->upperSeries()), 100.0);
        // 201 leaves: the others move down, the unowned rest grows.
        panel.addSample(kStart + 500, {process(202, 5, 0.125), process(203, 5, 0.25)});
        panel.drawNow();
        QCOMPARE(last(panel.shareSeries(202, 1414)->lowerSeries()), 0.0);
        QCOMPARE(last(panel.unownedSeries()->lowerSeries()), 37.5);
        // Shares that pass 100% are cut there; the unowned rest is empty, never negative.
        panel.addSample(kStart + 750, {process(202, 5, 0.7), process(203, 5, 0.6)});
        panel.drawNow();
        QCOMPARE(last(panel.shareSeries(203, 1421)->upperSeries()), 100.0);
        QCOMPARE(last(panel.unownedSeries()->lowerSeries()), 100.0);
        QCOMPARE(value_axis(panel.shareChart())->max(), 100.0);
        // A sample from the past is ignored.
        panel.addSample(kStart, {process(202, 5, 0.1)});
        panel.drawNow();
        QCOMPARE(last(panel.shareSeries(202, 1414)->upperSeries()), 70.0);
        QCOMPARE(panel.launchesSeries(202, 1414)->at(panel.launchesSeries(202, 1414)->count() - 1).x(), static_cast<double>(kStart + 750));
    }

    void ownerColoursAndOneLegendEntryPerProcess() {
        ChartsPanel panel;
        panel.resize(960, 640);  // room for whole names in the legend
        panel.show();  // legend markers count as visible only in a chart on screen
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.addSample(kStart, {process(301, 1, 0.1), process(302, 2, 0.1)});
        QCoreApplication::processEvents();  // the legend lays out its markers on the next event loop pass
        QCOMPARE(panel.launchesSeries(301, 2107)->pen().color(), owner_color(301, 2107));
        QCOMPARE(panel.shareSeries(302, 2114)->color(), owner_color(302, 2114));
        // Process names are listed once, in the launches chart; the share chart lists only the grey rest.
        int visible = 0;
        for (QLegendMarker* marker : panel.shareChart()->legend()->markers()) visible += marker->isVisible() ? 1 : 0;
        QCOMPARE(visible, 1);
        QCOMPARE(panel.unownedSeries()->color(), unowned_color());
        // A process that leaves and comes back while its old line is on screen is not listed twice.
        panel.addSample(kStart + 1000, {process(302, 2, 0.1)});
        panel.addSample(kStart + 2000, {process(301, 1, 0.1), process(302, 2, 0.1)});
        QCoreApplication::processEvents();
        QCOMPARE(series_named(panel.launchesChart(), QStringLiteral("301 worker")), 2);
        int listed = 0;
        for (QLegendMarker* marker : panel.launchesChart()->legend()->markers())
            listed += marker->isVisible() && marker->label() == QStringLiteral("301 worker") ? 1 : 0;
        QCOMPARE(listed, 1);
    }

    void launchesAxisFollowsTheVisiblePeak() {
        ChartsPanel panel;
        panel.resize(960, 640);  // room for four intervals (a short panel has fewer: labelsAndTitlesFitTheRoom)
        panel.show();
        QCOMPARE(value_axis(panel.launchesChart())->max(), 10.0);
        panel.addSample(kStart, {process(401, 1800, 0.1)});
        QCOMPARE(value_axis(panel.launchesChart())->max(), 2000.0);  // 1800 + 10% headroom, to a round 500
        for (qint64 s = 1; s <= 301; ++s) panel.addSample(kStart + s * kSecond, {process(401, 30, 0.1)});
        QCOMPARE(value_axis(panel.launchesChart())->max(), 40.0);  // the burst scrolled out
        panel.clear();
        QCOMPARE(panel.launchesChart()->series().size(), 0);
        QCOMPARE(panel.unownedSeries()->upperSeries()->count(), 0);
    }

    // Not on screen (a dock tab not raised, or hidden), samples only queue: no series changes. Shown again, the
    // series and axes catch up to exactly what a panel on screen all along shows.
    void hiddenPanelQueuesAndCatchesUp() {
        ChartsPanel seen;
        ChartsPanel hidden;
        seen.show();
        hidden.show();
        const auto samples_at = [](qint64 s) {
            std::vector<ProcessSample> samples = {process(601, 100 + static_cast<double>(s % 7), 0.25)};
            if (s < 200) samples.push_back(process(602, 50, 0.25));    // ends while hidden
            if (s >= 100) samples.push_back(process(603, 20, 0.125));  // starts while hidden
            if (s >= 150) samples.back().label = QStringLiteral("603 renamed");
            return samples;
        };
        for (ChartsPanel* panel : {&seen, &hidden}) panel->addSample(kStart, samples_at(0));
        QLineSeries* line = hidden.launchesSeries(601, 4207);
        QCOMPARE(line->count(), 1);
        hidden.setOnScreen(false);
        for (qint64 tick = 1; tick <= 4 * 400; ++tick)  // 400 s at 4 Hz: more than the window
            for (ChartsPanel* panel : {&seen, &hidden}) panel->addSample(kStart + tick * 250, samples_at(tick / 4));
        QCOMPARE(line->count(), 1);  // nothing drawn while hidden
        QCOMPARE(hidden.launchesSeries(603, 4221), nullptr);
        QCOMPARE(time_axis(hidden.launchesChart())->max().toMSecsSinceEpoch(), kStart);
        QVERIFY(hidden.pendingSamples() > 0);
        // The window's worth (both ends in) and the one sample before it, no more.
        QVERIFY(hidden.pendingSamples() <= ChartsPanel::kWindowMs / 250 + 2);
        hidden.setOnScreen(true);
        QCOMPARE(hidden.pendingSamples(), 0);
        QCOMPARE(hidden.launchesChart()->series().size(), seen.launchesChart()->series().size());
        const qint64 from = kStart + 400 * kSecond - ChartsPanel::kWindowMs;
        for (const int pid : {601, 603}) {
            const auto start = static_cast<std::uint64_t>(pid) * 7;
            QCOMPARE(shown(hidden.launchesSeries(pid, start), from), shown(seen.launchesSeries(pid, start), from));
            QVERIFY(!shown(seen.launchesSeries(pid, start), from).isEmpty());
            QCOMPARE(shown(hidden.shareSeries(pid, start)->upperSeries(), from), shown(seen.shareSeries(pid, start)->upperSeries(), from));
            QCOMPARE(shown(hidden.shareSeries(pid, start)->lowerSeries(), from), shown(seen.shareSeries(pid, start)->lowerSeries(), from));
        }
        QVERIFY(hidden.launchesSeries(601, 4207)->at(0).x() < static_cast<double>(from));  // the line enters at the left edge
        QCOMPARE(hidden.launchesSeries(603, 4221)->name(), QStringLiteral("603 renamed"));
        QCOMPARE(shown(hidden.unownedSeries()->lowerSeries(), from), shown(seen.unownedSeries()->lowerSeries(), from));
        QCOMPARE(time_axis(hidden.launchesChart())->max(), time_axis(seen.launchesChart())->max());
        QCOMPARE(value_axis(hidden.launchesChart())->max(), value_axis(seen.launchesChart())->max());
        // Hidden as a widget (hide/show) works the same way.
        hidden.hide();
        hidden.addSample(kStart + 401 * kSecond, samples_at(401));
        QCOMPARE(hidden.pendingSamples(), 1);
        hidden.show();
        QCOMPARE(hidden.pendingSamples(), 0);
        QCOMPARE(hidden.launchesSeries(601, 4207)->at(hidden.launchesSeries(601, 4207)->count() - 1).x(),
                 static_cast<double>(kStart + 401 * kSecond));
    }

    // In a short, wide dock the charts sit side by side; value labels thin out to the room they have, and an
    // axis title that would be cut ("launc...") is left out rather than cut.
    void labelsAndTitlesFitTheRoom() {
        ChartsPanel panel;
        panel.resize(1400, 300);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QCOMPARE(panel.splitter()->orientation(), Qt::Horizontal);
        panel.addSample(kStart, {process(701, 700, 0.5)});
        QCoreApplication::processEvents();
        for (QChart* chart : {panel.launchesChart(), panel.shareChart()}) {
            QValueAxis* axis = value_axis(chart);
            const double height = chart->plotArea().height();
            QVERIFY(axis->isTitleVisible());  // room enough here
            QVERIFY(QFontMetricsF(axis->titleFont()).horizontalAdvance(axis->titleText()) <= height);
            QVERIFY2(height / ((axis->max() - axis->min()) / axis->tickInterval()) >= 28, qPrintable(QString::number(height)));
        }
        // Fifteen processes (gui_cpu.sh's demo) in the bottom dock of a 1500x1000 window: the legend takes rows,
        // and what is left still holds whole labels.
        std::vector<ProcessSample> fifteen;
        for (int p = 0; p < 15; ++p) fifteen.push_back(process(710 + p, 50.0 * p, 1.0 / 16));
        panel.resize(1500, 300);
        panel.addSample(kStart + kSecond, fifteen);
        QCoreApplication::processEvents();
        for (QChart* chart : {panel.launchesChart(), panel.shareChart()}) {
            QValueAxis* axis = value_axis(chart);
            const double height = chart->plotArea().height();
            QCOMPARE(axis->isTitleVisible(), QFontMetricsF(axis->titleFont()).horizontalAdvance(axis->titleText()) + 8 <= height);
            QVERIFY2(height / ((axis->max() - axis->min()) / axis->tickInterval()) >= 28, qPrintable(QString::number(height)));
        }
        // Sixteen labels, even pids alone, do not fit half the dock: no legend rather than "7..." sixteen times,
        // and the title says where the colours are.
        QVERIFY(!panel.launchesChart()->legend()->isVisible());
        QVERIFY(panel.launchesChart()->title().contains("colours as in the process table"));
        QVERIFY(gpupart::test::save_screenshot(panel, QStringLiteral("charts_panel_15_processes_bottom_dock"), {1500, 300}));
        // Eight processes: pids in half the dock, whole names again when the charts get the full width.
        panel.clear();
        std::vector<ProcessSample> eight(fifteen.begin(), fifteen.begin() + 8);
        panel.addSample(kStart + 2 * kSecond, eight);
        QCoreApplication::processEvents();
        const auto label_of_717 = [&] { return panel.launchesChart()->legend()->markers(panel.launchesSeries(717, 717 * 7)).front()->label(); };
        QCOMPARE(label_of_717(), QStringLiteral("717"));
        QVERIFY(panel.launchesChart()->legend()->isVisible());
        QCOMPARE(panel.launchesChart()->title(), QStringLiteral("Kernel launches per second"));
        panel.resize(1500, 1000);  // one above the other, each the whole width
        QCoreApplication::processEvents();
        QCOMPARE(panel.splitter()->orientation(), Qt::Vertical);
        QCOMPARE(label_of_717(), QStringLiteral("717 worker"));
        panel.resize(500, 700);  // tall: one above the other
        QCoreApplication::processEvents();
        QCOMPARE(panel.splitter()->orientation(), Qt::Vertical);
        panel.resize(1400, 120);  // very short: fewer labels, titles left out
        QCoreApplication::processEvents();
        QCOMPARE(panel.splitter()->orientation(), Qt::Horizontal);
        for (QChart* chart : {panel.launchesChart(), panel.shareChart()}) {
            QValueAxis* axis = value_axis(chart);
            const double height = chart->plotArea().height();
            QCOMPARE(axis->isTitleVisible(), QFontMetricsF(axis->titleFont()).horizontalAdvance(axis->titleText()) + 8 <= height);
            QVERIFY2(height / ((axis->max() - axis->min()) / axis->tickInterval()) >= 28 || axis->max() / axis->tickInterval() <= 1,
                     qPrintable(QString::number(height)));
        }
    }

    void screenshot() {
        ChartsPanel panel;
        panel.show();
        // Five minutes of four processes at 4 Hz with smooth synthetic load: 4103 ends at 3:30, 4105 starts
        // at 1:00, 4102 is given 8 more TPCs at 2:30.
        for (qint64 tick = 0; tick <= 5 * 60 * 4; ++tick) {
            const double t = static_cast<double>(tick) / 4;
            std::vector<ProcessSample> samples;
            samples.push_back({4101, 990007, QStringLiteral("4101 python3 train.py"), 1400 + 300 * std::sin(t / 23), 17.0 / 66});
            samples.push_back({4102, 990004, QStringLiteral("4102 ./infer --batch 8"), 600 + 250 * std::sin(t / 9),
                               (t < 150 ? 8.0 : 16.0) / 66});
            if (t >= 60) samples.push_back({4105, 990011, QStringLiteral("4105 ./serve"), 900 + 120 * std::cos(t / 15), 16.0 / 66});
            if (t <= 210) samples.push_back({4103, 990003, QStringLiteral("4103 ./etl"), 250 + 80 * std::sin(t / 5), 9.0 / 66});
            panel.addSample(kStart + tick * 250, samples);
        }
        QVERIFY(gpupart::test::save_screenshot(panel, QStringLiteral("charts_panel"), {960, 640}));
    }
};

QTEST_MAIN(TestChartsPanel)
#include "test_charts_panel.moc"
