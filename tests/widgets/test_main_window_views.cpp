// The real window on the demo, what it shows: the recorded H200's floorplan, the process models and table
// (CPU%, RSS, graph execs that lag or cannot follow), charts that wait while hidden, programs' own masks and
// SMLP components, and the exports. The window, its session and the helpers: main_window_test_support.hpp.
// Screenshots go to $GPUPART_SCREENSHOTS when it is set (docs/screenshots/README.md).
#include <QAbstractItemModelTester>
#include <QChart>
#include <QDateTimeAxis>
#include <QDockWidget>
#include <QLabel>
#include <QLineSeries>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QXmlStreamReader>
#include <QtTest>

#include <filesystem>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "charts_panel.hpp"
#include "floorplan_view.hpp"
#include "main_window_test_support.hpp"
#include "model/gpu_queries.hpp"
#include "registry/registry.hpp"
#include "registry/registry_seqlock.h"
#include "smlp_fixture.hpp"
#include "smlp_panel.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::gui;
using namespace gpupart::widgets;
using namespace gpupart::test::main_window;

class MainWindowViewsTest : public QObject, private DemoWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { openDemoWindow(); }

    void cleanupTestCase() { closeDemoWindow(); }

    void showsTheRecordedH200WithEveryTpcAndNoTileOnAHole() {
        QVERIFY(window_->windowTitle().contains("NVIDIA H200"));
        QVERIFY(window_->windowTitle().contains("recording"));
        FloorplanView* floorplan = window_->floorplan();
        int tiles = 0;
        for (const FloorplanTile& tile : floorplan->geometry().tiles()) {
            if (tile.hole) QVERIFY(!floorplan->geometry().tpc_at(tile.rect.center()));
            else ++tiles;
        }
        QCOMPARE(tiles, 66);
        QCOMPARE(floorplan->scene().owners.size(), std::size_t{4});
        save_screenshot(window_.get(), "gui-demo-window.png");
        save_screenshot(floorplan, "gui-floorplan.png");
    }

    void processModelsPassTheModelTester() {
        QAbstractItemModelTester source(window_->processModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxy(window_->processTable()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        session_->refresh();  // a refresh under the testers: cells change in place
        QTest::qWait(static_cast<int>(kRateWindow.count()) + 100);  // one full rate window
        session_->refresh();
        const ProcessRow* row = window_->processModel()->rowForPid(pid_of(*session_, "llm-serving"));
        QVERIFY(row != nullptr);
        QVERIFY(row->launches_per_second.has_value());
        QVERIFY(*row->launches_per_second > 0);
    }

    // CPU% and RSS of every demo worker, from /proc: RSS at once, CPU% from the second reading (a second later).
    void processTableShowsCpuAndRssOfTheWorkers() {
        session_->refresh();
        QTest::qWait(1100);
        session_->refresh();
        ProcessTableModel* model = window_->processModel();
        QCOMPARE(model->rowCount(), 4);
        for (int r = 0; r < model->rowCount(); ++r) {
            const ProcessRow& row = model->rows()[static_cast<std::size_t>(r)];
            QVERIFY2(row.cpu_percent.has_value(), qPrintable(row.command));
            QVERIFY(*row.cpu_percent >= 0 && *row.cpu_percent <= 100 * 64);
            QVERIFY(row.rss_bytes.has_value());
            QVERIFY(*row.rss_bytes > 100 * 1024);  // a running C++ program holds more than 100 KiB
            const QString cpu = model->index(r, ProcessTableModel::cpu).data().toString();
            const QString rss = model->index(r, ProcessTableModel::rss).data().toString();
            QVERIFY2(cpu != "–" && cpu.toDouble() == QString::number(*row.cpu_percent, 'f', 1).toDouble(), qPrintable(cpu));
            QVERIFY2(rss.endsWith("MiB") || rss.endsWith("KiB"), qPrintable(rss));
        }
        QCOMPARE(model->headerData(ProcessTableModel::cpu, Qt::Horizontal).toString(), QString("CPU%"));
        QCOMPARE(model->headerData(ProcessTableModel::rss, Qt::Horizontal).toString(), QString("RSS"));
    }

    // The shim publishes graph counts; a demo worker has no graphs, so the test writes the counts a shim
    // would into the worker's real slot and looks at the process table's shim column and tooltip.
    void graphExecsThatLagOrCannotFollowAreShown() {
        const int llm = pid_of(*session_, "llm-serving");
        std::string path;
        for (const RegistryEntry& entry : Registry(Registry::default_directory()).list())
            if (entry.record && entry.record->pid == llm) path = entry.path;
        QVERIFY(!path.empty());
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        QVERIFY(fd >= 0);
        void* memory = ::mmap(nullptr, GPUPART_SLOT_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ::close(fd);
        QVERIFY(memory != MAP_FAILED);
        auto* slot = static_cast<gpupart_slot_file*>(memory);
        const auto publish = [&](std::uint64_t execs, std::uint64_t current, std::uint64_t unfollowable) {
            gpupart_store64(&slot->counters.graph_tracking, GPUPART_GRAPHS_FOLLOWED);
            gpupart_store64(&slot->counters.graph_generation, gpupart_load64(&slot->control.current.generation));
            gpupart_store64(&slot->counters.graph_execs, execs);
            gpupart_store64(&slot->counters.graph_current, current);
            gpupart_store64(&slot->counters.graph_unfollowable, unfollowable);
            session_->refresh();
            return window_->processModel()->rowForPid(llm);
        };
        const ProcessRow* row = publish(3, 2, 0);
        QVERIFY(row != nullptr);
        QVERIFY2(row->shim.endsWith(" · 1 graph(s) at next launch"), qPrintable(row->shim));
        QVERIFY(!row->shim_problem);
        QVERIFY2(row->shim_detail.contains("3 CUDA graph execs: 2 carry the current mask, 1 an older one"), qPrintable(row->shim_detail));
        row = publish(3, 3, 1);
        QVERIFY2(row->shim.endsWith(" · 1 graph(s) cannot follow"), qPrintable(row->shim));
        QVERIFY(row->shim_problem);
        window_->raiseDock("dock-processes");
        QTest::qWait(50);
        save_screenshot(window_.get(), "gui-process-graphs.png");
        row = publish(0, 0, 0);
        QCOMPARE(row->shim, QString("active"));
        ::munmap(memory, GPUPART_SLOT_FILE_SIZE);
    }

    // A dock tab that is not raised does no chart work at a refresh: the samples wait and are drawn when it is shown.
    void hiddenChartsWaitAndCatchUpWhenShown() {
        window_->raiseDock("dock-processes");
        QTest::qWait(20);
        ChartsPanel* charts = window_->charts();
        QVERIFY(!charts->onScreen());
        const int pending = charts->pendingSamples();
        session_->refresh();
        session_->refresh();
        QCOMPARE(charts->pendingSamples(), pending + 2);
        window_->raiseDock("dock-charts");
        QTRY_VERIFY(charts->onScreen());
        QCOMPARE(charts->pendingSamples(), 0);
        const ProcessRow* llm = window_->processModel()->rowForPid(pid_of(*session_, "llm-serving"));
        QVERIFY(llm != nullptr);
        QLineSeries* line = charts->launchesSeries(llm->pid, llm->start_time);
        QVERIFY(line != nullptr);
        QVERIFY(line->count() > 0);
        // The axis reaches the newest sample: the catch-up drew the samples that waited.
        QVERIFY(qobject_cast<QDateTimeAxis*>(charts->launchesChart()->axes(Qt::Horizontal).at(0))->max().toMSecsSinceEpoch() >=
                static_cast<qint64>(line->at(line->count() - 1).x()));
        window_->raiseDock("dock-processes");
    }

    // Vision chooses its own masks (the demo worker's --app-masks): the TPCs cell marks it and the
    // process tooltip gives both masks. An SMLP component written into the demo's registry as the library
    // writes one: the dock lists its holder and queues, and the floorplan bands the holder's TPCs.
    void programsOwnMasksAndSmlpComponentsAreShown() {
        const int vision = pid_of(*session_, "vision");
        const int llm = pid_of(*session_, "llm-serving");
        session_->refresh();
        const ProcessRow* row = window_->processModel()->rowForPid(vision);
        QVERIFY(row != nullptr);
        QVERIFY(row->app_masks);
        QVERIFY(!window_->processModel()->rowForPid(llm)->app_masks);
        int model_row = 0;
        while (window_->processModel()->rows()[static_cast<std::size_t>(model_row)].pid != vision) ++model_row;
        const QModelIndex tpcs = window_->processModel()->index(model_row, ProcessTableModel::tpcs);
        QCOMPARE(tpcs.data().toString(), QString("16 +app"));
        const QString tip = window_->processModel()->index(model_row, ProcessTableModel::pid).data(Qt::ToolTipRole).toString();
        // The program chooses TPC numbers: global = the lowest 8 of its operator's 16, the inside stream the
        // lowest 4, the outside stream the lowest 4 real TPCs outside them (0-3: gpc0-3's first TPCs).
        QVERIFY2(tip.contains(QString("Operator's mask (gpupart set): TPCs ") + kVision), qPrintable(tip));
        QVERIFY2(tip.contains("global 4-5,12-13,20-21,28-29 → 4-5,12-13,20-21,28-29"), qPrintable(tip));
        QVERIFY2(tip.contains("stream 0x7f0000001000 4-5,12-13 → 4-5,12-13"), qPrintable(tip));
        QVERIFY2(tip.contains(QString("stream 0x7f0000002000 0-3 → ") + kVision + " (none inside the operator"), qPrintable(tip));
        QVERIFY2(tip.contains("Launches on the program"), qPrintable(tip));

        std::string dir = user_directory(Registry::default_directory(), ::getuid(), false).value();
        test::FixtureComponent component;
        component.name = "camera";
        component.gpu = "GPU-00000000-0000-0000-0000-000000000001";
        component.tpcs = gpc_tpcs(session_->gpu(), 4);  // vision's gpc4: 4,12,20,28,35,42,49,56
        component.h = 2;
        component.requests = {{GPUPART_SMLP_SQ, vision, 0, 5, 1, tpcs_of({4, 12, 20, 28}), "detect", 4},
                              {GPUPART_SMLP_FQ, llm, 0, 9, 2, {}, "plan", 2},
                              {GPUPART_SMLP_PQ, vision, 0, 1, 3, {}, "batch", 1}};
        const std::string path = test::write_smlp_file(dir, *test::make_smlp_file(component));
        session_->refresh();
        SmlpPanel* panel = window_->smlp();
        QCOMPARE(panel->tree()->topLevelItemCount(), 1);
        QTreeWidgetItem* camera = panel->tree()->topLevelItem(0);
        QCOMPARE(camera->text(SmlpPanel::what), QString("camera"));
        QCOMPARE(camera->childCount(), 3);
        QCOMPARE(camera->child(0)->text(SmlpPanel::process), QString::number(vision) + " vision");
        QCOMPARE(camera->child(0)->text(SmlpPanel::tpcs), QString("4,12,20,28"));
        QCOMPARE(camera->text(SmlpPanel::note), QString("free 35,42,49,56 · this GPU"));
        QCOMPARE(window_->floorplan()->scene().grants.size(), std::size_t{1});
        QCOMPARE(window_->floorplan()->scene().grants[0].tpcs, tpcs_of({4, 12, 20, 28}));
        QVERIFY(floorplan_tooltip(window_->floorplan()->scene(), 12).contains("SMLP camera: held by " + QString::number(vision)));
        QVERIFY(!floorplan_tooltip(window_->floorplan()->scene(), 42).contains("SMLP"));
        window_->raiseDock("dock-smlp");
        window_->raiseDock("dock-processes");
        window_->floorplan()->setSelection({});
        window_->resizeDocks({window_->findChild<QDockWidget*>("dock-smlp")}, {640}, Qt::Horizontal);  // every column shows
        QTest::qWait(50);
        save_screenshot(window_.get(), "gui-smlp-and-app-masks.png");
        // The process tooltip as Qt draws one (a rich-text label), for the screenshot.
        QLabel label(tip);
        label.setStyleSheet("background: #ffffdc; border: 1px solid #999; padding: 4px");
        label.resize(label.sizeHint());  // adjustSize() would cap a window at 2/3 of the (offscreen) screen
        save_screenshot(&label, "gui-app-masks-tooltip.png");
        std::filesystem::remove(path);  // leave the demo as it was for the next test
        session_->refresh();
        QCOMPARE(panel->tree()->topLevelItemCount(), 0);
        QVERIFY(window_->floorplan()->scene().grants.empty());
    }

    void exportsArePicturesAndSnapshotsThatLoadBack() {
        QTemporaryDir dir;
        window_->exportFloorplanPng(dir.filePath("plan.png"));
        QImage png(dir.filePath("plan.png"));
        QVERIFY(!png.isNull());
        QVERIFY(png.width() > 800);
        window_->exportFloorplanSvg(dir.filePath("plan.svg"));
        QFile svg(dir.filePath("plan.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&svg);
        int elements = 0;
        while (!xml.atEnd()) elements += xml.readNext() == QXmlStreamReader::StartElement ? 1 : 0;
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(elements > 100);
        QVERIFY(QSvgRenderer(dir.filePath("plan.svg")).isValid());
        window_->exportCopyEnginesPng(dir.filePath("copy.png"));
        QVERIFY(!QImage(dir.filePath("copy.png")).isNull());
        window_->exportCopyEnginesSvg(dir.filePath("copy.svg"));
        QVERIFY(QSvgRenderer(dir.filePath("copy.svg")).isValid());
        window_->exportSnapshotJson(dir.filePath("snapshot.json"));
        const Snapshot loaded = load_snapshot(dir.filePath("snapshot.json").toStdString());
        QCOMPARE(loaded.gpus.at(0).tpcs.size(), std::size_t{66});
        QCOMPARE(loaded.gpus.at(0).processes.size(), std::size_t{4});
        QVERIFY(loaded.gpus.at(0).processes.at(0).tpc_mask.has_value());
        // A failed export names the file and leaves nothing behind.
        try {
            window_->exportFloorplanPng("/nonexistent-dir/plan.png");
            QFAIL("export to a missing directory succeeded");
        } catch (const UserError& error) {
            QVERIFY(QString(error.what()).contains("/nonexistent-dir/plan.png"));
        }
    }
};

QTEST_MAIN(MainWindowViewsTest)
#include "test_main_window_views.moc"
