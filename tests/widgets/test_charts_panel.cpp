// ChartsPanel with synthetic times: the five-minute window drops old points, processes that leave end
// their series (which go once scrolled out), launch rates are a point a second and steady shares two
// points, the share stack adds up to 100% with the unowned rest on top, colours are the owners'
// colours, and the launches axis follows the highest visible rate.
#include <cmath>

#include <QAreaSeries>
#include <QChart>
#include <QDateTimeAxis>
#include <QLegendMarker>
#include <QLineSeries>
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
    void init() { forget_owner_colors_except({}); }

    void windowDropsOldPointsAndEndedProcessesGo() {
        ChartsPanel panel;
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
        const qint64 t0 = kStart + 10 * kSecond;  // on a second boundary
        for (int i = 0; i < 4; ++i) panel.addSample(t0 + i * 250, {process(501, 10.0 * (i + 1), 0.1)});
        QLineSeries* line = panel.launchesSeries(501, 3507);
        QCOMPARE(line->count(), 1);
        QCOMPARE(line->at(0), QPointF(static_cast<double>(t0 + 750), 25.0));  // the mean of 10, 20, 30, 40, at the newest time
        panel.addSample(t0 + kSecond, {process(501, 50, 0.1)});
        QCOMPARE(line->count(), 2);
        QCOMPARE(line->at(1), QPointF(static_cast<double>(t0 + kSecond), 50.0));
    }

    void sharesStackToAHundredPercent() {
        ChartsPanel panel;
        panel.addSample(kStart, {process(201, 5, 0.5), process(202, 5, 0.125)});
        panel.addSample(kStart + 250, {process(202, 5, 0.125), process(201, 5, 0.5), process(203, 5, 0.25)});
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
        QCOMPARE(last(panel.shareSeries(202, 1414)->lowerSeries()), 0.0);
        QCOMPARE(last(panel.unownedSeries()->lowerSeries()), 37.5);
        // Shares that pass 100% are cut there; the unowned rest is empty, never negative.
        panel.addSample(kStart + 750, {process(202, 5, 0.7), process(203, 5, 0.6)});
        QCOMPARE(last(panel.shareSeries(203, 1421)->upperSeries()), 100.0);
        QCOMPARE(last(panel.unownedSeries()->lowerSeries()), 100.0);
        QCOMPARE(value_axis(panel.shareChart())->max(), 100.0);
        // A sample from the past is ignored.
        panel.addSample(kStart, {process(202, 5, 0.1)});
        QCOMPARE(last(panel.shareSeries(202, 1414)->upperSeries()), 70.0);
        QCOMPARE(panel.launchesSeries(202, 1414)->at(panel.launchesSeries(202, 1414)->count() - 1).x(), static_cast<double>(kStart + 750));
    }

    void ownerColoursAndOneLegendEntryPerProcess() {
        ChartsPanel panel;
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
        QCOMPARE(value_axis(panel.launchesChart())->max(), 10.0);
        panel.addSample(kStart, {process(401, 1800, 0.1)});
        QCOMPARE(value_axis(panel.launchesChart())->max(), 2000.0);  // 1800 + 10% headroom, to a round 500
        for (qint64 s = 1; s <= 301; ++s) panel.addSample(kStart + s * kSecond, {process(401, 30, 0.1)});
        QCOMPARE(value_axis(panel.launchesChart())->max(), 40.0);  // the burst scrolled out
        panel.clear();
        QCOMPARE(panel.launchesChart()->series().size(), 0);
        QCOMPARE(panel.unownedSeries()->upperSeries()->count(), 0);
    }

    void screenshot() {
        ChartsPanel panel;
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
