// The app's GPU meters (metrics, power and clock) against a stand-in NVML
// (tests/unit/fake_nvml_meters.c) named by GPUPART_NVML, on the demo: the status area shows the meters,
// the power/clock chart gets a point per refresh, a process NVML lists gets its GPU memory in the table.
// Without NVML the chart says why. Offscreen, with a screenshot of the chart (GPUPART_SCREENSHOTS).
#include <QChart>
#include <QLineSeries>
#include <QTemporaryDir>
#include <QtTest>

#include "gpu_meters_chart.hpp"
#include "gui_session.hpp"
#include "main_window.hpp"
#include "process_table_model.hpp"
#include "process_table_view.hpp"

using namespace gpupart;
using namespace gpupart::gui;

class GpuMetersViewTest : public QObject {
    Q_OBJECT
    QTemporaryDir settings_dir_;

private slots:
    void initTestCase() { qputenv("XDG_CONFIG_HOME", settings_dir_.path().toUtf8()); }

    void theWindowShowsNvmlsMetersAndPowerAndClockLines() {
        qputenv("GPUPART_NVML", GPUPART_FAKE_NVML_METERS);
        qputenv("FAKE_NVML_UUID", "GPU-00000000-0000-0000-0000-000000000001");  // the demo's GPU key
        SessionOptions options;
        options.demo = true;
        options.snapshot = "builtin:h200";
        GuiSession session(options);
        MainWindow window(session);
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.setRefreshHz(0);
        window.raiseDock("dock-power-clock");  // its tab shown: a chart off screen only keeps its points
        QTRY_VERIFY(window.gpuMetersChart()->onScreen());
        session.refresh();
        widgets::GpuMetersChart* chart = window.gpuMetersChart();
        const int points = chart->clockSeries()->count();
        QVERIFY(points >= 1);
        qputenv("FAKE_NVML_SM_MHZ", "1500");  // a neighbour heats the GPU: the clock falls
        session.refresh();
        const QString status = window.statusText();
        QVERIFY2(status.contains("GPU 87% · mem 1.0/80.0 GiB · 412/700 W · SM 1500/1980 MHz · 61°C"), qPrintable(status));
        QCOMPARE(chart->powerSeries()->count(), points + 1);  // a point a refresh
        QCOMPARE(chart->clockSeries()->count(), points + 1);
        QCOMPARE(chart->clockSeries()->at(points - 1).y(), 1755.0);
        QCOMPARE(chart->clockSeries()->at(points).y(), 1500.0);
        QCOMPARE(chart->powerSeries()->at(points).y(), 412.345);
        // Its tab not raised, the series wait; raised again, they take the points they missed at once.
        window.raiseDock("dock-processes");
        QTRY_VERIFY(!chart->onScreen());
        session.refresh();
        session.refresh();
        QCOMPARE(chart->clockSeries()->count(), points + 1);
        window.raiseDock("dock-power-clock");
        QTRY_VERIFY(chart->onScreen());
        QCOMPARE(chart->clockSeries()->count(), points + 3);
        QCOMPARE(chart->powerSeries()->count(), points + 3);
        // GPU%: NVML sampled none of the demo's processes (it samples only processes that ran work): 0, not "–".
        auto* model = window.processTable()->model();
        QCOMPARE(model->headerData(widgets::ProcessTableModel::gpu_util, Qt::Horizontal).toString(), QString("GPU%"));
        QVERIFY(model->rowCount() > 0);
        for (int r = 0; r < model->rowCount(); ++r)
            QCOMPARE(model->index(r, widgets::ProcessTableModel::gpu_util).data().toString(), QString("0"));
        const QString dir = qEnvironmentVariable("GPUPART_SCREENSHOTS");
        if (!dir.isEmpty()) QVERIFY(chart->grab().save(dir + "/gui-power-clock.png"));
        qunsetenv("FAKE_NVML_SM_MHZ");
        qunsetenv("GPUPART_NVML");
        qunsetenv("FAKE_NVML_UUID");
    }

    void withoutNvmlTheChartSaysWhy() {
        qputenv("GPUPART_NVML", "/nonexistent/libnvidia-ml.so.1");
        SessionOptions options;
        options.demo = true;
        options.snapshot = "builtin:h200";
        GuiSession session(options);
        MainWindow window(session);
        window.setRefreshHz(0);
        session.refresh();
        QVERIFY(window.gpuMetersChart()->chart()->title().contains("no GPU meters: no NVML"));
        QCOMPARE(window.gpuMetersChart()->powerSeries()->count(), 0);
        QVERIFY(!window.statusText().contains(" W ·"));
        qunsetenv("GPUPART_NVML");
    }
};

QTEST_MAIN(GpuMetersViewTest)
#include "test_gpu_meters_view.moc"
