// The app on a live GPU (app item 5), run by tests/device/gui_live.sh on the GPU machine: the
// real window on this machine's GPU and the live registry, beside two real PyTorch processes that
// `gpupart run` started on gpc0-3 (A) and gpc4-7 (B).
//   minimal platform (QDrag runs its loop from mouse events): drag gpc3 from A onto B's row in the process
//     table, check the registry, let both run 6 s, undo with Ctrl+Z, check again, let them run 6 s;
//   offscreen platform (fonts, no drag loop): the same change through the give action a drop calls,
//     with screenshots of the window before, after and after the undo.
// Environment: GPUPART_LIVE_A, GPUPART_LIVE_B (pids), GPUPART_LIVE_EVENTS (a file: "<what> <unix seconds>"
// lines that gui_live.sh lines up with the processes' rates), GPUPART_SCREENSHOTS (a directory).
#include <QDateTime>
#include <QFile>
#include <QTemporaryDir>
#include <QTimer>
#include <QUndoStack>
#include <QtTest>

#include "floorplan_view.hpp"
#include "gui_session.hpp"
#include "main_window.hpp"
#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "process_table_model.hpp"
#include "process_table_view.hpp"
#include "registry/registry.hpp"

using namespace gpupart;
using namespace gpupart::gui;
using namespace gpupart::widgets;

class GuiLiveTest : public QObject {
    Q_OBJECT
    QTemporaryDir settings_dir_;
    std::unique_ptr<GuiSession> session_;
    std::unique_ptr<MainWindow> window_;
    int a_ = 0;
    int b_ = 0;

    QString mask_in_registry(int pid) const {
        const SlotRecord record = Registry(Registry::default_directory()).find_live(pid);
        const GpuControl* entry = record.control ? record.control->gpu(gpu_key(session_->gpu())) : nullptr;
        return entry != nullptr && entry->has_mask ? QString::fromStdString(entry->allowed.to_list()) : "all";
    }

    QString gpc_list(const char* expression) const {
        return QString::fromStdString(resolve_mask(expression, session_->gpu()).mask.to_list());
    }

    QPoint rowCenter(int pid) const {
        ProcessTableView* table = window_->processTable();
        for (int row = 0; row < table->model()->rowCount(); ++row) {
            const QModelIndex index = table->model()->index(row, 2);
            if (index.data(ProcessTableModel::PidRole).toInt() == pid) return table->visualRect(index).center();
        }
        return {};
    }

    static void event(const char* what) {
        QFile file(qEnvironmentVariable("GPUPART_LIVE_EVENTS"));
        QVERIFY(file.open(QIODevice::Append | QIODevice::Text));
        file.write(QString("%1 %2\n").arg(what).arg(static_cast<double>(QDateTime::currentMSecsSinceEpoch()) / 1000.0, 0, 'f', 3).toUtf8());
    }

    void screenshot(const QString& name) {
        const QString dir = qEnvironmentVariable("GPUPART_SCREENSHOTS");
        if (!dir.isEmpty()) QVERIFY(window_->grab().save(dir + "/" + name));
    }

private slots:
    void initTestCase() {
        qputenv("XDG_CONFIG_HOME", settings_dir_.path().toUtf8());
        a_ = qEnvironmentVariableIntValue("GPUPART_LIVE_A");
        b_ = qEnvironmentVariableIntValue("GPUPART_LIVE_B");
        QVERIFY2(a_ > 0 && b_ > 0, "GPUPART_LIVE_A and GPUPART_LIVE_B name the two processes");
        session_ = std::make_unique<GuiSession>(SessionOptions{});  // this machine's GPU 0, the live registry
        QVERIFY2(!session_->isRecording() && !session_->isDemo(), "a live GPU, not a recording");
        window_ = std::make_unique<MainWindow>(*session_);
        window_->resize(1600, 1000);
        window_->show();
        QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
        QTRY_VERIFY_WITH_TIMEOUT(!rowCenter(a_).isNull() && !rowCenter(b_).isNull(), 10000);
        QCOMPARE(mask_in_registry(a_), gpc_list("gpc0-3"));
        QCOMPARE(mask_in_registry(b_), gpc_list("gpc4-7"));
    }

    void cleanupTestCase() {
        window_.reset();
        session_.reset();
    }

    void dragAGpcOntoAnotherProcessAndUndo() {
        if (QGuiApplication::platformName() != "minimal") QSKIP("the drag loop runs under the minimal platform");
        event("start");
        QTest::qWait(6000);
        FloorplanView* floorplan = window_->floorplan();
        QTest::mouseClick(floorplan, Qt::LeftButton, {}, floorplan->headerRectInWidget(3).center().toPoint());
        QCOMPARE(QString::fromStdString(floorplan->selection().to_list()), gpc_list("gpc3"));
        QWidget* viewport = window_->processTable()->viewport();
        const QPoint target = rowCenter(b_);
        QTimer::singleShot(100, [&] {
            QTest::mouseMove(viewport, target);
            QTimer::singleShot(100, [&] {
                QTest::mouseMove(viewport, target + QPoint(2, 0));
                QTimer::singleShot(100, [&] { QTest::mouseRelease(viewport, Qt::LeftButton, {}, target + QPoint(2, 0)); });
            });
        });
        const QPoint start = floorplan->tileRectInWidget(gpc_tpcs(session_->gpu(), 3).bits().front()).center().toPoint();
        QTest::mousePress(floorplan, Qt::LeftButton, {}, start);
        QTest::mouseMove(floorplan, start + QPoint(30, 30));
        QTRY_COMPARE_WITH_TIMEOUT(mask_in_registry(b_), gpc_list("gpc3-7"), 5000);
        event("dragged");
        QCOMPARE(mask_in_registry(a_), gpc_list("gpc0-2"));
        QCOMPARE(window_->undoStack()->count(), 1);
        qInfo("after the drag: %s", qPrintable(window_->lastMessage()));
        QTest::qWait(6000);
        QApplication::setActiveWindow(window_.get());
        QVERIFY(QTest::qWaitForWindowActive(window_.get()));
        QTest::keyClick(window_.get(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(mask_in_registry(a_), gpc_list("gpc0-3"));
        QCOMPARE(mask_in_registry(b_), gpc_list("gpc4-7"));
        event("undone");
        qInfo("after the undo: %s", qPrintable(window_->lastMessage()));
        QTest::qWait(6000);
        event("end");
    }

    void screenshotsOfTheLiveWindow() {
        if (QGuiApplication::platformName() != "offscreen") QSKIP("screenshots need the offscreen platform's fonts");
        QTest::qWait(3000);  // the charts gather a few points
        screenshot("gui-live-before.png");
        window_->floorplan()->setSelection(gpc_tpcs(session_->gpu(), 3));
        QVERIFY(window_->giveSelection(DropTarget{b_}));
        QCOMPARE(mask_in_registry(b_), gpc_list("gpc3-7"));
        QTest::qWait(4000);
        screenshot("gui-live-after-give.png");
        window_->undoStack()->undo();
        QCOMPARE(mask_in_registry(a_), gpc_list("gpc0-3"));
        QTest::qWait(2000);
        screenshot("gui-live-after-undo.png");
    }
};

QTEST_MAIN(GuiLiveTest)
#include "gui_live_test.moc"
