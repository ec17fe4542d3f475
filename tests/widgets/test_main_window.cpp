// The real window on the demo: real worker processes in a private registry, real drags, the real
// controller. Screenshots go to $GPUPART_SCREENSHOTS when it is set (docs/screenshots/README.md).
#include <QAbstractItemModelTester>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QAction>
#include <QMap>
#include <QUndoStack>
#include <QXmlStreamReader>
#include <QtTest>

#include <filesystem>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "controller/profile_apply.hpp"
#include "charts_panel.hpp"
#include "findings_panel.hpp"
#include <QChart>
#include <QDateTimeAxis>
#include <QLineSeries>
#include "floorplan_view.hpp"
#include "profiles_panel.hpp"
#include "gui_session.hpp"
#include "main_window.hpp"
#include "model/gpu_queries.hpp"
#include "process_table_model.hpp"
#include "process_table_view.hpp"
#include "registry/registry.hpp"
#include "registry/registry_seqlock.h"
#include "smlp_fixture.hpp"
#include "smlp_panel.hpp"
#include <QDockWidget>
#include <QLabel>
#include <QTreeWidget>
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::gui;
using namespace gpupart::widgets;

namespace {

int pid_of(const GuiSession& session, const QString& name) {
    for (const ProcessRow& row : session.rows())
        if (row.command.contains(name)) return row.pid;
    return 0;
}

// The mask as TPC numbers: the registry reads the slot's descriptor bits through the built-in H200's map.
QString mask_in_registry(int pid) {
    static const Gpu h200 = load_snapshot("builtin:h200").gpus.at(0);
    const SlotRecord record = Registry(Registry::default_directory(), h200).find_live(pid);
    const GpuControl* entry = record.control ? record.control->gpu("GPU-00000000-0000-0000-0000-000000000001") : nullptr;
    return entry != nullptr && entry->has_mask ? QString::fromStdString(entry->allowed.to_list()) : "all";
}

QPoint center_of(const QRectF& rect) { return rect.center().toPoint(); }

TpcMask tpcs_of(std::initializer_list<int> numbers) {
    TpcMask mask;
    for (int number : numbers) mask.set(number);
    return mask;
}

// vision's gpc4-5 as TPC numbers (descriptor bits 36-43,45-52); with gpc7's 7,15,23,31 given; without 4 and 12.
constexpr const char* kVision = "4-5,12-13,20-21,28-29,35-36,42-43,49-50,56-57";
constexpr const char* kVisionPlusFour = "4-5,7,12-13,15,20-21,23,28-29,31,35-36,42-43,49-50,56-57";
constexpr const char* kVisionLessTwo = "5,13,20-21,28-29,35-36,42-43,49-50,56-57";

void save_screenshot(QWidget* widget, const QString& name) {
    const QString dir = qEnvironmentVariable("GPUPART_SCREENSHOTS");
    if (dir.isEmpty()) return;
    QVERIFY(widget->grab().save(dir + "/" + name));
}

}  // namespace

class MainWindowTest : public QObject {
    Q_OBJECT
    std::unique_ptr<GuiSession> session_;
    std::unique_ptr<MainWindow> window_;
    QTemporaryDir settings_dir_;

    QPoint rowCenter(int pid) {
        ProcessTableView* table = window_->processTable();
        for (int row = 0; row < table->model()->rowCount(); ++row) {
            const QModelIndex index = table->model()->index(row, 2);
            if (index.data(ProcessTableModel::PidRole).toInt() == pid) return table->visualRect(index).center();
        }
        return {};
    }

private slots:
    void initTestCase() {
        qputenv("XDG_CONFIG_HOME", settings_dir_.path().toUtf8());  // QSettings of the test, not the user's
        SessionOptions options;
        options.demo = true;
        options.snapshot = "builtin:h200";
        options.demo_app_masks = true;  // vision also plays a program that chooses its own masks (libgpupart.so)
        session_ = std::make_unique<GuiSession>(options);
        window_ = std::make_unique<MainWindow>(*session_);
        window_->resize(1500, 1000);
        window_->show();
        QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
        window_->setRefreshHz(0);  // the test refreshes when it needs to
        QCOMPARE(session_->rows().size(), std::size_t{4});
    }

    void cleanupTestCase() {
        window_.reset();
        session_.reset();
    }

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

    void draggingAGpcOntoAProcessGivesItThoseTpcs() {
        // The offscreen platform ignores drags; the minimal one runs Qt's own drag loop from mouse events
        // (ctest runs this test under both: minimal for behaviour, offscreen for screenshots with fonts).
        if (QGuiApplication::platformName() == "offscreen") QSKIP("offscreen platform: QDrag does nothing; run under -platform minimal");
        const int vision = pid_of(*session_, "vision");
        const int embeddings = pid_of(*session_, "embeddings");
        // GPC 7 is TPCs 7,15,23,31,38,45,52,59,61 (descriptor bits 63-71) on the built-in H200.
        QCOMPARE(mask_in_registry(embeddings), QString("7,15,23,31,38,45,52,59,61"));
        FloorplanView* floorplan = window_->floorplan();
        const QPoint header = center_of(floorplan->headerRectInWidget(7));
        QTest::mouseClick(floorplan, Qt::LeftButton, {}, header);  // select GPC 7 by its header
        QCOMPARE(QString::fromStdString(floorplan->selection().to_list()), QString("7,15,23,31,38,45,52,59,61"));
        // Move only 7,15,23,31: ctrl-click the other five off again.
        for (int tpc : {38, 45, 52, 59, 61})
            QTest::mouseClick(floorplan, Qt::LeftButton, Qt::ControlModifier, center_of(floorplan->tileRectInWidget(tpc)));
        QCOMPARE(QString::fromStdString(floorplan->selection().to_list()), QString("7,15,23,31"));

        // A real QDrag: press on a selected tile, move past the drag distance; inside the drag's event
        // loop, move over vision's row in the process table and release there.
        QWidget* viewport = window_->processTable()->viewport();
        const QPoint target = rowCenter(vision);
        QVERIFY(!target.isNull());
        QTimer::singleShot(100, [&] {
            QTest::mouseMove(viewport, target);
            QTimer::singleShot(100, [&] {
                QTest::mouseMove(viewport, target + QPoint(2, 0));
                QTimer::singleShot(100, [&] { QTest::mouseRelease(viewport, Qt::LeftButton, {}, target + QPoint(2, 0)); });
            });
        });
        const QPoint start = center_of(floorplan->tileRectInWidget(15));
        QTest::mousePress(floorplan, Qt::LeftButton, {}, start);
        QTest::mouseMove(floorplan, start + QPoint(30, 30));
        // vision's gpc4-5 (4-5,12-13,20-21,28-29,35-36,42-43,49-50,56-57) and the four of gpc7.
        QTRY_COMPARE_WITH_TIMEOUT(mask_in_registry(vision), QString(kVisionPlusFour), 3000);
        QCOMPARE(mask_in_registry(embeddings), QString("38,45,52,59,61"));
        QCOMPARE(window_->undoStack()->count(), 1);
        QVERIFY2(window_->lastMessage().startsWith("Applied: give 7,15,23,31 to"), qPrintable(window_->lastMessage()));
        window_->undoStack()->undo();  // leave the demo as it was for the next test
        QCOMPARE(mask_in_registry(embeddings), QString("7,15,23,31,38,45,52,59,61"));
    }

    void undoAndRedoGoThroughTheJournal() {
        const int vision = pid_of(*session_, "vision");
        const int embeddings = pid_of(*session_, "embeddings");
        window_->floorplan()->setSelection(tpcs_of({7, 15, 23, 31}));  // four of gpc7 (embeddings')
        QVERIFY(window_->giveSelection(DropTarget{vision}));  // what the "give to" menu and a drop do
        QCOMPARE(mask_in_registry(vision), QString(kVisionPlusFour));
        QApplication::setActiveWindow(window_.get());  // shortcuts act in the active window
        QVERIFY(QTest::qWaitForWindowActive(window_.get()));
        QTest::keyClick(window_.get(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(mask_in_registry(vision), QString(kVision));
        QCOMPARE(mask_in_registry(embeddings), QString("7,15,23,31,38,45,52,59,61"));
        QVERIFY2(window_->lastMessage().startsWith("Undone"), qPrintable(window_->lastMessage()));
        QTest::keyClick(window_.get(), Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(mask_in_registry(vision), QString(kVisionPlusFour));
        QTest::keyClick(window_.get(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(mask_in_registry(vision), QString(kVision));
        QTest::keyClick(window_.get(), Qt::Key_Y, Qt::ControlModifier);  // the other redo key
        QCOMPARE(mask_in_registry(vision), QString(kVisionPlusFour));
        window_->undoStack()->undo();
        QCOMPARE(mask_in_registry(vision), QString(kVision));
    }

    // A key bound twice in one window does nothing at all (Qt: "Ambiguous shortcut overload"), whatever the
    // desktop's own bindings: every shortcut of the window's actions is bound once.
    void noShortcutIsBoundTwice() {
        QMap<QString, QString> owner;
        for (const QAction* action : window_->findChildren<QAction*>()) {
            if (action->shortcutContext() == Qt::WidgetShortcut) continue;  // a widget's own: not the window's
            for (const QKeySequence& key : action->shortcuts()) {
                const QString text = key.toString();
                QVERIFY2(!owner.contains(text), qPrintable(text + " is bound to both '" + owner.value(text) + "' and '" +
                                                           action->text() + "'"));
                owner.insert(text, action->text());
            }
        }
        QVERIFY(owner.contains("Ctrl+Shift+Z"));
        QVERIFY(owner.contains("Ctrl+Y"));
    }

    // The View menu's zoom actions reach the floorplan from anywhere in the window; Ctrl+0 fits it again.
    void zoomShortcutsOfTheWindow() {
        FloorplanView* floorplan = window_->floorplan();
        QVERIFY(floorplan->fitsView());
        QApplication::setActiveWindow(window_.get());
        QVERIFY(QTest::qWaitForWindowActive(window_.get()));
        window_->processTable()->setFocus();  // not the floorplan: the window's shortcut does it
        const double fit = floorplan->zoom();
        QTest::keyClick(window_.get(), Qt::Key_Plus, Qt::ControlModifier);
        QVERIFY(!floorplan->fitsView());
        QVERIFY(floorplan->zoom() > fit);
        QTest::keyClick(window_.get(), Qt::Key_0, Qt::ControlModifier);
        QVERIFY(floorplan->fitsView());
        QCOMPARE(floorplan->zoom(), fit);
    }

    void aDropThatWouldStarveAProcessIsRefused() {
        const int batch = pid_of(*session_, "batch-train");
        const int llm = pid_of(*session_, "llm-serving");
        const QString before = mask_in_registry(batch);
        window_->floorplan()->setSelection(gpc_tpcs(session_->gpu(), 6));  // all of batch-train's TPCs
        const DropVerdict verdict = session_->judge(DropTarget{llm}, window_->floorplan()->selection());
        QVERIFY(!verdict.allowed);
        QVERIFY2(verdict.message.contains("it would keep none"), qPrintable(verdict.message));
        QVERIFY(!window_->giveSelection(DropTarget{llm}));
        QVERIFY(window_->lastMessageWasError());
        QVERIFY2(window_->lastMessage().contains("it would keep none"), qPrintable(window_->lastMessage()));
        QCOMPARE(mask_in_registry(batch), before);
        const int stack = window_->undoStack()->count();
        // The same refusal when dropped on the table: the row does not accept the drag.
        QCOMPARE(window_->undoStack()->count(), stack);
    }

    void keyboardOnlyRepartitioning() {
        const int llm = pid_of(*session_, "llm-serving");
        FloorplanView* floorplan = window_->floorplan();
        floorplan->setSelection({});
        floorplan->setFocus();
        // GPC 0's slots are TPCs 0 24 64 / 8 62 65 / (hole) 16 63. Home focuses TPC 0; Down goes to slot 3
        // (TPC 8), Down again skips GPC 0's empty slot 6 into the box below, GPC 4, at its slot 0 (TPC 4,
        // vision's). Space selects it, shift+Down extends to its slot 3 (TPC 12).
        const QString llm_before = mask_in_registry(llm);
        QTest::keyClick(floorplan, Qt::Key_Home);
        QCOMPARE(floorplan->focusTpc(), std::optional<int>(0));
        QTest::keyClick(floorplan, Qt::Key_Down);
        QCOMPARE(floorplan->focusTpc(), std::optional<int>(8));
        QTest::keyClick(floorplan, Qt::Key_Down);
        QCOMPARE(floorplan->focusTpc(), std::optional<int>(4));
        QTest::keyClick(floorplan, Qt::Key_Space);
        QTest::keyClick(floorplan, Qt::Key_Down, Qt::ShiftModifier);
        const TpcMask chosen = floorplan->selection();
        QCOMPARE(QString::fromStdString(chosen.to_list()), QString("4,12"));
        // Enter opens the "give to" menu; pick llm-serving's entry with the keyboard.
        bool picked = false;
        QTimer::singleShot(200, [&] {
            auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
            if (menu == nullptr) return;
            for (QAction* action : menu->actions()) {
                if (action->text().startsWith(QString::number(llm) + " ")) {
                    menu->setActiveAction(action);
                    QTest::keyClick(menu, Qt::Key_Return);
                    picked = true;
                    return;
                }
            }
            menu->close();
        });
        QTest::keyClick(floorplan, Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(picked, 3000);
        // gpc0-3 (0-3,8-11,16-19,24-27,32-34,39-41,46-48,53-55,62-65) and TPCs 4 and 12.
        QCOMPARE(mask_in_registry(llm), QString("0-4,8-12,16-19,24-27,32-34,39-41,46-48,53-55,62-65"));
        session_->refresh();
        window_->floorplan()->setSelection({});
        save_screenshot(window_.get(), "gui-after-give.png");
        QCOMPARE(mask_in_registry(pid_of(*session_, "vision")), QString(kVisionLessTwo));
        window_->undoStack()->undo();
        QCOMPARE(mask_in_registry(llm), llm_before);
    }

    void profilesApplyThroughTheUndoStack() {
        const int llm = pid_of(*session_, "llm-serving");
        const int vision = pid_of(*session_, "vision");
        ProfilesPanel* profiles = window_->profiles();
        profiles->reload();
        QVERIFY(profiles->saveCurrentAs("demo-split"));
        QVERIFY(profiles->profileNames().contains("demo-split"));
        window_->floorplan()->setSelection(tpcs_of({4, 12}));
        QVERIFY(window_->giveSelection(DropTarget{llm}));
        QCOMPARE(mask_in_registry(vision), QString(kVisionLessTwo));
        const int before = window_->undoStack()->count();
        profiles->confirm = [](const QString&) { return true; };
        QVERIFY(profiles->selectProfile("demo-split"));
        profiles->applySelected();
        QVERIFY2(!profiles->messageIsError(), qPrintable(profiles->messageText()));
        QCOMPARE(mask_in_registry(vision), QString(kVision));
        QCOMPARE(window_->undoStack()->count(), before + 1);
        QVERIFY(read_armed_rules(Registry::default_directory()).has_value());  // its rules for later processes
        window_->undoStack()->undo();  // the profile's change is undone like any other, its rules with it
        QCOMPARE(mask_in_registry(vision), QString(kVisionLessTwo));
        QVERIFY(!read_armed_rules(Registry::default_directory()).has_value());
        window_->undoStack()->undo();
        QCOMPARE(mask_in_registry(vision), QString(kVision));
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

    void everyViewShowsTheDemo() {
        for (int i = 0; i < 4; ++i) {  // a few samples for the charts
            QTest::qWait(static_cast<int>(kRateWindow.count()) + 50);
            session_->refresh();
        }
        QVERIFY(!window_->findings()->findChildren<QWidget*>().isEmpty());
        for (const auto& [dock, file] : std::vector<std::pair<QString, QString>>{
                 {"dock-processes", "gui-process-table.png"}, {"dock-charts", "gui-charts.png"},
                 {"dock-engines", "gui-engines.png"}, {"dock-copy-engines", "gui-copy-engines.png"}}) {
            window_->raiseDock(dock);
            QTest::qWait(50);
            save_screenshot(window_.get(), file);
        }
        window_->raiseDock("dock-profiles");
        QTest::qWait(50);
        save_screenshot(window_.get(), "gui-profiles.png");
        window_->raiseDock("dock-findings");
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

QTEST_MAIN(MainWindowTest)
#include "test_main_window.moc"
