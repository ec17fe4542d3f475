// The real window on the demo, what a user changes in it: a real drag of TPCs onto a process, undo and redo
// through the journal, every shortcut bound once, the zoom keys, a drop refused, keyboard-only
// repartitioning, and a profile applied through the undo stack; then every dock on the demo so changed (its
// profiles screenshot shows the profile saved here). The window, its session and the helpers:
// main_window_test_support.hpp. Screenshots go to $GPUPART_SCREENSHOTS when it is set
// (docs/screenshots/README.md).
#include <QAction>
#include <QMap>
#include <QMenu>
#include <QUndoStack>
#include <QtTest>

#include <utility>
#include <vector>

#include "controller/profile_apply.hpp"
#include "findings_panel.hpp"
#include "floorplan_view.hpp"
#include "main_window_test_support.hpp"
#include "model/gpu_queries.hpp"
#include "profiles_panel.hpp"
#include "registry/registry.hpp"

using namespace gpupart;
using namespace gpupart::gui;
using namespace gpupart::widgets;
using namespace gpupart::test::main_window;

class MainWindowActionsTest : public QObject, private DemoWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() {
        openDemoWindow();
        if (QTest::currentTestFailed()) return;
        // Two readings a second apart before the first test: the process table in this class's screenshots
        // (gui-after-give.png) shows launch rates and CPU%, which each need an earlier reading.
        session_->refresh();
        QTest::qWait(1100);
        session_->refresh();
    }

    void cleanupTestCase() { closeDemoWindow(); }

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
};

QTEST_MAIN(MainWindowActionsTest)
#include "test_main_window_actions.moc"
