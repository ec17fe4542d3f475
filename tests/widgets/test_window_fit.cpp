// The window at the scale of a real node and a real screen: its first geometry from the screen, the process
// table's spare width, legible copy-engine labels and plan preview, distinct toolbar icons, exits announced,
// the drag verdict (what the drop would change first, cut at a word, whole in a tooltip) and the highlighted
// target row, a plan with every TPC held, and the registry of GPUPART_REGISTRY_DIR shown as `gpupart top`
// shows it. On the demo: real worker processes, the real controller and the real gpupart CLI.
#include <QAction>
#include <QDockWidget>
#include <QFontInfo>
#include <QHeaderView>
#include <QMimeData>
#include <QScrollArea>
#include <QScrollBar>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QToolBar>
#include <QtTest>

#include <csignal>
#include <filesystem>
#include <set>

#include "copy_engine_view.hpp"
#include "floorplan_view.hpp"
#include "gui_session.hpp"
#include "main_window.hpp"
#include "model/gpu_queries.hpp"
#include "plan_dialog.hpp"
#include "platform/demo_workload.hpp"
#include "process_table_model.hpp"
#include "process_table_view.hpp"
#include "snapshot/snapshot_file.hpp"
#include "window_fit.hpp"

using namespace gpupart;
using namespace gpupart::gui;
using namespace gpupart::widgets;

namespace {

std::set<std::string> demo_dirs_in_shm() {
    std::set<std::string> found;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error))
        if (entry.path().filename().string().starts_with("gpupart-demo-")) found.insert(entry.path().string());
    return found;
}

const ProcessState* process_of(const GuiSession& session, int pid) {
    for (const ProcessState& p : session.state().processes)
        if (p.pid == pid) return &p;
    return nullptr;
}

}  // namespace

class WindowFitTest : public QObject {
    Q_OBJECT
    QTemporaryDir home_;

private slots:
    void initTestCase() {
        qputenv("XDG_CONFIG_HOME", home_.filePath("config").toUtf8());  // no saved geometry: a first start
        qputenv("XDG_STATE_HOME", home_.filePath("state").toUtf8());
        qunsetenv("GPUPART_REGISTRY_DIR");
    }

    // 85% of the available area, capped, centred: a 1280x720 screen with a 30 px panel shows the whole window.
    void firstGeometryFitsTheScreen() {
        for (const QRect available : {QRect(0, 30, 1280, 690), QRect(0, 0, 1920, 1080), QRect(0, 0, 3840, 2160), QRect(1920, 0, 800, 600)}) {
            const QRect geometry = initial_window_geometry(available);
            QVERIFY2(available.contains(geometry), qPrintable(QString("%1x%2").arg(available.width()).arg(available.height())));
            QVERIFY(geometry.width() >= std::min(1600, available.width() * 8 / 10));
            QVERIFY(geometry.height() >= std::min(1000, available.height() * 8 / 10));
            QCOMPARE(geometry.center(), available.center());
        }
        QCOMPARE(initial_window_geometry(QRect(0, 0, 3840, 2160)).size(), QSize(1600, 1000));
        // A saved geometry from a larger screen or a monitor to the right: inside this screen, no larger.
        QCOMPARE(keep_on_screen(QRect(2000, 900, 1800, 1200), QRect(0, 30, 1280, 690)), QRect(0, 30, 1280, 690));
        QCOMPARE(keep_on_screen(QRect(1000, 500, 800, 400), QRect(0, 30, 1280, 690)), QRect(480, 320, 800, 400));
        QCOMPARE(keep_on_screen(QRect(100, 100, 800, 400), QRect(0, 30, 1280, 690)), QRect(100, 100, 800, 400));
    }

    void elidesAtAWordWithTheWholeTextKept() {
        const QFontMetrics metrics(QApplication::font());
        const QString text = "give TPCs 3-4 to 4101 (4101: 16 → 18 TPCs, 4102: 16 → 14 TPCs) — new warning: TPCs 3-4 are shared";
        QCOMPARE(elide_at_word(text, metrics, 10000), text);
        for (int width = 60; width < metrics.horizontalAdvance(text); width += 37) {
            const QString shown = elide_at_word(text, metrics, width);
            QVERIFY2(metrics.horizontalAdvance(shown) <= width, qPrintable(shown));
            QVERIFY2(shown.endsWith(" …"), qPrintable(shown));
            const QString head = shown.chopped(2);
            QVERIFY2(text.startsWith(head), qPrintable(shown));
            QVERIFY2(text.at(head.size()) == ' ' || QString(",;:—").contains(text.at(head.size())), qPrintable(shown));
        }
    }

    void theWindowOnTheDemo() {
        SessionOptions options;
        options.demo = true;
        options.snapshot = "builtin:h200";
        options.demo_workers = 8;
        GuiSession session(options);
        MainWindow window(session);
        window.setRefreshHz(0);
        // A first start: sized to the screen, never larger, the status bar inside the window.
        const QRect available = window.screen()->availableGeometry();
        QVERIFY2(available.contains(window.geometry()), qPrintable(QString("%1x%2 on %3x%4").arg(window.width()).arg(window.height())
                                                                   .arg(available.width()).arg(available.height())));
        QCOMPARE(window.size(), initial_window_geometry(available).size().expandedTo(window.minimumSizeHint()));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.statusBar()->isVisible());
        QVERIFY(window.rect().contains(window.statusBar()->geometry()));

        // Redo, refresh and give: three pictures, none another's.
        QList<QImage> icons;
        for (const char* name : {"action-undo", "action-redo", "action-refresh"}) {
            auto* action = window.findChild<QAction*>(name);
            QVERIFY2(action != nullptr && !action->icon().isNull(), name);
            icons << action->icon().pixmap(16, 16).toImage();
        }
        QVERIFY(icons[0] != icons[1] && icons[1] != icons[2] && icons[0] != icons[2]);
        auto* give = window.findChild<QAction*>("action-give");
        QVERIFY(give != nullptr);
        QVERIFY(give->icon().isNull() || give->icon().pixmap(16, 16).toImage() != icons[1]);

        // At 4K the Command column gets the spare width; Shim keeps what its text needs.
        window.resize(3840, 2000);
        session.refresh();
        QTest::qWait(50);
        ProcessTableView* table = window.processTable();
        const int command = table->columnWidth(ProcessTableModel::command);
        const int shim = table->columnWidth(ProcessTableModel::shim);
        QVERIFY2(command > 1500 && shim < 400, qPrintable(QString("command %1 px, shim %2 px").arg(command).arg(shim)));
        QVERIFY(command > shim);

        // The copy-engine dock: labels at least the app's font size; a small dock scrolls instead.
        window.resize(1280, 690);
        window.raiseDock("dock-copy-engines");
        QTest::qWait(50);
        auto* copy = window.findChild<CopyEngineView*>();
        QVERIFY(copy != nullptr);
        QTRY_VERIFY(copy->isVisible());
        const double label_px = 13 * copy->pictureScale();
        QVERIFY2(label_px + 0.5 >= QFontInfo(QApplication::font()).pixelSize(), qPrintable(QString::number(label_px)));
        window.raiseDock("dock-processes");

        // A drag over a row: that row is highlighted; the verdict leads with the change, is cut at a word.
        window.resize(900, 690);
        QTest::qWait(50);
        const std::vector<StartedWorker>& workers = session.demoWorkers();
        const int giver = workers.at(0).pid;
        const int taker = workers.at(1).pid;
        TpcMask moved;
        moved.set(process_of(session, giver)->mask.bits().front());
        QVERIFY(!moved.empty());
        int row = -1;
        for (int r = 0; r < table->model()->rowCount(); ++r)
            if (table->model()->index(r, 0).data(ProcessTableModel::PidRole).toInt() == taker) row = r;
        QVERIFY(row >= 0);
        const QPoint at = table->visualRect(table->model()->index(row, 1)).center();
        std::unique_ptr<QMimeData> mime(make_tpc_mime(moved));
        QDragEnterEvent enter(at, Qt::MoveAction, mime.get(), Qt::LeftButton, {});
        QApplication::sendEvent(table->viewport(), &enter);
        QDragMoveEvent move(at, Qt::MoveAction, mime.get(), Qt::LeftButton, {});
        QApplication::sendEvent(table->viewport(), &move);
        QVERIFY(table->dropTargetPid() == taker);
        const QString verdict = window.dropVerdict();
        QVERIFY2(verdict.startsWith(QString("give ")) && verdict.contains(QString("%1: ").arg(taker)) && verdict.contains("→"), qPrintable(verdict));
        const QString shown = window.statusBar()->currentMessage();
        QVERIFY2(shown == verdict || (shown.endsWith(" …") && verdict.startsWith(shown.chopped(2)) && verdict.at(shown.size() - 2) == ' '),
                 qPrintable(shown + " | " + verdict));
        if (shown != verdict) QVERIFY(window.statusBar()->toolTip().contains(verdict.left(30).toHtmlEscaped()));
        QDragLeaveEvent leave;
        QApplication::sendEvent(table->viewport(), &leave);
        QVERIFY(!table->dropTargetPid());
        QVERIFY(window.statusBar()->currentMessage().isEmpty());

        // Warnings that stood before the drop do not lead it: the taker also holds two of the giver's TPCs
        // (an overlap warning now); dropping one of them on the taker leaves the same pair overlapping on
        // one TPC, a changed message about the same processes, counted as standing, not as a new warning.
        {
            const ProcessState* g = process_of(session, giver);
            const ProcessState* t = process_of(session, taker);
            const std::vector<int> giver_bits = g->mask.bits();
            TpcMask shared_two;
            shared_two.set(giver_bits.at(1));
            shared_two.set(giver_bits.at(2));
            session.apply(session.controller().plan_masks({{taker, t->mask | shared_two, t->start_time}}, "overlap"));
            TpcMask one;
            one.set(giver_bits.at(1));
            const DropVerdict again = session.judge({taker, process_of(session, taker)->start_time}, one);
            QVERIFY2(again.allowed, qPrintable(again.message));
            QVERIFY2(again.message.contains("stood before the drop"), qPrintable(again.message));
            QVERIFY2(!again.message.contains(QString("new warning: process %1 and process %2").arg(std::min(giver, taker)).arg(std::max(giver, taker))),
                     qPrintable(again.message));
            QVERIFY2(!again.message.contains(QString("new warning: process %1 and process %2").arg(std::max(giver, taker)).arg(std::min(giver, taker))),
                     qPrintable(again.message));
        }

        // A process that exits is said, with its pid and command.
        const int leaving = workers.back().pid;
        ::kill(leaving, SIGTERM);
        QTRY_VERIFY_WITH_TIMEOUT((session.refresh(), process_of(session, leaving) == nullptr), 5000);
        QTRY_VERIFY2(window.lastMessage().contains(QString("Process %1 (").arg(leaving)) && window.lastMessage().contains("exited"),
                     qPrintable(window.lastMessage()));
        QVERIFY(window.lastMessage().contains("gpupart-demo-worker"));

        // Every TPC held by one process: the plan says who holds them and what to do (the CLI's line).
        const ProcessState* holder = process_of(session, giver);
        try {
            // As `gpupart set PID all`: the others keep theirs (shared), none is left to plan with.
            session.apply(session.controller().plan_masks({{holder->pid, real_tpcs(session.gpu()), holder->start_time}}, "set all"));
        } catch (const std::exception& error) {
            QFAIL(error.what());
        }
        PlanDialog* dialog = window.openPlanDialog();
        dialog->setCandidates({{taker, QString("%1 worker").arg(taker), "compute", 100}});
        dialog->setTarget(taker, "50%");
        dialog->show();
        QVERIFY(QTest::qWaitForWindowExposed(dialog));
        dialog->preview();
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->running(), 20000);
        QVERIFY2(dialog->verdictText().contains("nothing to plan: all 66 TPCs") && dialog->verdictText().contains(QString::number(giver))
                     && dialog->verdictText().contains("give some back"), qPrintable(dialog->verdictText()));
        QVERIFY(!dialog->verdictText().contains("cannot be partitioned"));
        // The preview is drawn legibly (its 10 px text at 9 px or more), scrolled when the pane is smaller.
        QVERIFY2(dialog->previewTextScale() >= 0.9 - 1e-9, qPrintable(QString::number(dialog->previewTextScale())));
        dialog->resize(900, 600);
        QTest::qWait(50);
        QVERIFY(dialog->previewTextScale() >= 0.9 - 1e-9);
        QVERIFY(dialog->previewArea()->horizontalScrollBar()->maximum() > 0 || dialog->previewArea()->verticalScrollBar()->maximum() > 0);
        dialog->close();

        // A saved geometry is where the next window opens, kept on the screen when it was saved larger or
        // elsewhere (another monitor, a bigger screen).
        window.setGeometry(30, 40, 750, 700);
        window.close();  // saves it
        {
            MainWindow again(session);
            QCOMPARE(again.geometry(), QRect(30, 40, 750, 700));
            again.setGeometry(available.right() + 500, available.bottom() + 400, available.width() + 900, available.height() + 700);
            again.close();
        }
        MainWindow third(session);
        QVERIFY2(available.contains(third.geometry()), qPrintable(QString("%1,%2 %3x%4").arg(third.x()).arg(third.y()).arg(third.width()).arg(third.height())));
    }

    // With no GPU and GPUPART_REGISTRY_DIR set, the app shows that registry's processes (those `gpupart top`
    // shows) and starts no workers of its own in /dev/shm.
    void honoursGpupartRegistryDir() {
        QTemporaryDir dir;
        const QString registry = dir.filePath("registry");
        qputenv("GPUPART_REGISTRY_DIR", registry.toUtf8());
        qputenv("GPUPART_JOURNAL", dir.filePath("history.jsonl").toUtf8());
        const Gpu h200 = load_snapshot("builtin:h200").gpus.at(0);
        std::vector<StartedWorker> theirs = start_demo_workers(h200, demo_workers(3), 60, true);
        std::set<int> pids;
        for (const StartedWorker& w : theirs) pids.insert(w.pid);
        const std::set<std::string> before = demo_dirs_in_shm();
        {
            GuiSession session(SessionOptions{});  // no GPU here: the recording, over the named registry
            QTRY_VERIFY_WITH_TIMEOUT((session.refresh(), session.state().processes.size() == pids.size()), 5000);
            std::set<int> shown;
            for (const ProcessState& p : session.state().processes) shown.insert(p.pid);
            QCOMPARE(shown, pids);
            QVERIFY(session.demoWorkers().empty());
            QCOMPARE(session.namedRegistry(), registry.toStdString());
            QVERIFY2(QString::fromStdString(session.chosen().why).contains(registry), session.chosen().why.c_str());
            QCOMPARE(demo_dirs_in_shm(), before);
            QCOMPARE(qgetenv("GPUPART_REGISTRY_DIR"), registry.toUtf8());
        }
        for (const StartedWorker& w : theirs) ::kill(w.pid, SIGTERM);
        {
            // Empty, and --demo asked: the demo's workers go into that registry, not a private one.
            QTRY_VERIFY_WITH_TIMEOUT((GuiSession(SessionOptions{}).state().processes.empty()), 5000);
            SessionOptions demo;
            demo.demo = true;
            GuiSession session(demo);
            QCOMPARE(session.demoWorkers().size(), std::size_t{4});
            QCOMPARE(session.state().processes.size(), std::size_t{4});
            QCOMPARE(demo_dirs_in_shm(), before);
        }
        qunsetenv("GPUPART_REGISTRY_DIR");
        qunsetenv("GPUPART_JOURNAL");
        {
            // Unset: a private registry, and the environment as it was afterwards.
            GuiSession session(SessionOptions{});
            QVERIFY(qEnvironmentVariableIsSet("GPUPART_REGISTRY_DIR"));
            QCOMPARE(session.demoWorkers().size(), std::size_t{4});
        }
        QVERIFY(!qEnvironmentVariableIsSet("GPUPART_REGISTRY_DIR"));
        QCOMPARE(demo_dirs_in_shm(), before);
    }
};

QTEST_MAIN(WindowFitTest)
#include "test_window_fit.moc"
