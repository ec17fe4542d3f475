// The window by keyboard alone, on the demo (real workers in a private registry, the real controller), with
// real key events: Tab leaves the process table, F6 / Shift+F6 go round the regions, Ctrl+F finds the filter,
// the floorplan's tile cursor selects, and Delete releases only from the floorplan or the table, after a
// confirmation that names every letter, pid and TPC and whose default is Cancel. Also a drag onto a letter chip.
#include <QAction>
#include <QDockWidget>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include <functional>

#include "floorplan_view.hpp"
#include "gui_session.hpp"
#include "main_window.hpp"
#include "model/gpu_queries.hpp"
#include "owner_colors.hpp"
#include "process_table_model.hpp"
#include "process_table_view.hpp"
#include "registry/registry.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::gui;
using namespace gpupart::widgets;

namespace {

QString mask_in_registry(int pid) {  // as TPC numbers, through the built-in H200's map
    static const Gpu h200 = load_snapshot("builtin:h200").gpus.at(0);
    const SlotRecord record = Registry(Registry::default_directory(), h200).find_live(pid);
    const GpuControl* entry = record.control ? record.control->gpu("GPU-00000000-0000-0000-0000-000000000001") : nullptr;
    return entry != nullptr && entry->has_mask ? QString::fromStdString(entry->allowed.to_list()) : "all";
}

QWidget* focused() { return QApplication::focusWidget(); }

bool inside(QWidget* region, QWidget* widget) { return widget != nullptr && (widget == region || region->isAncestorOf(widget)); }

// What the release confirmation said, whether Cancel was its default, and the answer given (by a button).
struct Confirmation {
    bool shown = false;
    QString text;
    bool cancel_is_default = false;
};

// Bumped when a waiting answer_confirmation must stop (its Confirmation is gone).
int g_round = 0;

// Answers the next release confirmation: Enter (the default button) or a click on "Release".
void answer_confirmation(Confirmation& seen, bool release) {
    auto poll = std::make_shared<std::function<void(int)>>();
    *poll = [&seen, release, poll, round = g_round](int tries) {
        if (round != g_round) return;
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        if (box == nullptr || box->objectName() != "release-confirmation") {
            if (tries > 0) QTimer::singleShot(50, [poll, tries] { (*poll)(tries - 1); });
            return;
        }
        seen.shown = true;
        seen.text = box->text();
        seen.cancel_is_default = box->defaultButton() == box->button(QMessageBox::Cancel);
        if (!release) {
            QTest::keyClick(box, Qt::Key_Return);  // what a hurried Enter does
            return;
        }
        for (QAbstractButton* button : box->buttons())
            if (button->text() == "Release") button->click();
    };
    QTimer::singleShot(50, [poll] { (*poll)(60); });
}

}  // namespace

class WindowKeyboardTest : public QObject {
    Q_OBJECT
    std::unique_ptr<GuiSession> session_;
    std::unique_ptr<MainWindow> window_;
    QTemporaryDir settings_dir_;

    int pid_of(const QString& name) const {
        for (const ProcessRow& row : session_->rows())
            if (row.command.contains(name)) return row.pid;
        return 0;
    }
    std::uint64_t start_of(int pid) const {
        for (const ProcessRow& row : session_->rows())
            if (row.pid == pid) return row.start_time;
        return 0;
    }
    QChar letter_of(int pid) const { return owner_letter_of(owner_mark(pid, start_of(pid))); }
    void key(int key, Qt::KeyboardModifiers modifiers = {}) {
        QTest::keyClick(focused() != nullptr ? focused() : window_.get(), static_cast<Qt::Key>(key), modifiers);
    }
    void selectRowOf(int pid) {
        ProcessTableView* table = window_->processTable();
        for (int row = 0; row < table->model()->rowCount(); ++row)
            if (table->model()->index(row, 0).data(ProcessTableModel::PidRole).toInt() == pid) {
                const QRect cell = table->visualRect(table->model()->index(row, 2));
                QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
            }
    }

private slots:
    void initTestCase() {
        qputenv("XDG_CONFIG_HOME", settings_dir_.path().toUtf8());
        SessionOptions options;
        options.demo = true;
        options.snapshot = "builtin:h200";
        session_ = std::make_unique<GuiSession>(options);
        window_ = std::make_unique<MainWindow>(*session_);
        window_->resize(1500, 1000);
        window_->show();
        QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
        window_->setRefreshHz(0);
        QApplication::setActiveWindow(window_.get());
        QVERIFY(QTest::qWaitForWindowActive(window_.get()));
        QCOMPARE(session_->rows().size(), std::size_t{4});
    }

    // A dialog closing leaves no active window on the minimal platform (a window manager gives the focus back
    // to the window): each test starts in the active window.
    void init() {
        ++g_round;
        QApplication::setActiveWindow(window_.get());
        QVERIFY(QTest::qWaitForWindowActive(window_.get()));
    }

    void cleanupTestCase() {
        window_.reset();
        session_.reset();
    }

    // A read-only table: Tab and Shift+Tab go to the next and previous widget, not the next cell.
    void tabLeavesTheProcessTable() {
        ProcessTableView* table = window_->processTable();
        selectRowOf(pid_of("vision"));
        table->setFocus();
        QVERIFY(table->hasFocus());
        key(Qt::Key_Tab);
        QVERIFY2(!inside(table, focused()), "Tab stayed in the process table");
        table->setFocus();
        key(Qt::Key_Backtab, Qt::ShiftModifier);
        QVERIFY2(!inside(table, focused()), "Shift+Tab stayed in the process table");
    }

    // F6 goes floorplan, filter, table, then each dock on screen, and back round; Shift+F6 the other way.
    void f6GoesRoundTheRegionsAndCtrlFFindsTheFilter() {
        FloorplanView* floorplan = window_->floorplan();
        QLineEdit* filter = window_->findChild<QLineEdit*>("process-filter");
        floorplan->setFocus();
        key(Qt::Key_F6);
        QCOMPARE(focused(), static_cast<QWidget*>(filter));
        key(Qt::Key_F6);
        QVERIFY(inside(window_->processTable(), focused()));
        key(Qt::Key_F6);
        auto* findings = window_->findChild<QDockWidget*>("dock-findings");
        QVERIFY2(inside(findings, focused()), qPrintable(focused() ? focused()->metaObject()->className() : QString("none")));
        int presses = 0;
        while (!inside(floorplan, focused()) && presses++ < 10) key(Qt::Key_F6);
        QVERIFY2(presses < 10, "F6 did not come back to the floorplan");
        key(Qt::Key_F6, Qt::ShiftModifier);
        QVERIFY(!inside(floorplan, focused()));
        key(Qt::Key_F6);
        QVERIFY(floorplan->hasFocus());
        key(Qt::Key_F, Qt::ControlModifier);
        QCOMPARE(focused(), static_cast<QWidget*>(filter));
    }

    // Reached by Shift+F6 from the filter, the floorplan shows its tile cursor; arrows and Space select;
    // Delete asks first (Enter picks Cancel), then releases exactly what it said.
    void theFloorplanByKeyboardAloneAndDeleteAsksFirst() {
        FloorplanView* floorplan = window_->floorplan();
        floorplan->setSelection({});
        const int llm = pid_of("llm-serving");
        const QString before = mask_in_registry(llm);
        window_->findChild<QLineEdit*>("process-filter")->setFocus();
        key(Qt::Key_F6, Qt::ShiftModifier);
        QVERIFY(floorplan->hasFocus());
        QCOMPARE(floorplan->focusTpc(), std::optional<int>(0));  // the cursor shows at once, on GPC 0's first TPC
        key(Qt::Key_Space);
        key(Qt::Key_Right);  // GPC 0's slots: 0 24 64 / 8 62 65 / (hole) 16 63
        QCOMPARE(floorplan->focusTpc(), std::optional<int>(24));
        key(Qt::Key_Space);
        QCOMPARE(QString::fromStdString(floorplan->selection().to_list()), QString("0,24"));

        Confirmation first;
        answer_confirmation(first, false);
        key(Qt::Key_Delete);
        QTRY_VERIFY_WITH_TIMEOUT(first.shown, 3000);
        QVERIFY(first.cancel_is_default);
        QVERIFY2(first.text.startsWith("Release TPCs 0, 24 from 1 process?"), qPrintable(first.text));
        QVERIFY2(first.text.contains(QString("%1  pid %2 (llm-serving): TPCs 0, 24").arg(letter_of(llm)).arg(llm)), qPrintable(first.text));
        QCOMPARE(mask_in_registry(llm), before);  // Enter cancelled
        init();
        QVERIFY(floorplan->hasFocus());  // the window's focus is where it was

        Confirmation second;
        answer_confirmation(second, true);
        key(Qt::Key_Delete);
        QTRY_VERIFY_WITH_TIMEOUT(second.shown, 3000);
        QTRY_VERIFY_WITH_TIMEOUT(!mask_in_registry(llm).startsWith("0,"), 3000);
        QVERIFY2(!QString("," + mask_in_registry(llm) + ",").contains(",24,"), qPrintable(mask_in_registry(llm)));
        window_->undoStack()->undo();
        QCOMPARE(mask_in_registry(llm), before);
    }

    // With TPCs selected in the floorplan, Delete in the filter, a dock or the toolbar does nothing at all.
    void deleteAnywhereElseDoesNothing() {
        const int llm = pid_of("llm-serving");
        const QString before = mask_in_registry(llm);
        window_->floorplan()->setSelection(gpc_tpcs(session_->gpu(), 0));
        const int changes = window_->undoStack()->count();
        for (QWidget* where : {static_cast<QWidget*>(window_->findChild<QLineEdit*>("process-filter")),
                               window_->findChild<QDockWidget*>("dock-findings")->widget()}) {
            Confirmation seen;
            answer_confirmation(seen, true);
            where->setFocus();
            key(Qt::Key_Delete);
            QTest::qWait(400);
            ++g_round;  // stop waiting for it
            QVERIFY2(!seen.shown, qPrintable(where->metaObject()->className()));
            QCOMPARE(mask_in_registry(llm), before);
            QCOMPARE(window_->undoStack()->count(), changes);
        }
        window_->floorplan()->setSelection({});
    }

    // Delete in the table releases the floorplan's TPCs from the selected processes only: TPC 0, shared by
    // llm-serving and vision, leaves vision and stays llm-serving's.
    void deleteInTheTableReleasesFromTheSelectedProcessesOnly() {
        const int llm = pid_of("llm-serving");
        const int vision = pid_of("vision");
        const QString llm_before = mask_in_registry(llm);
        const QString vision_before = mask_in_registry(vision);
        TpcMask shared = session_->state().processes.front().mask;
        for (const ProcessState& p : session_->state().processes)
            if (p.pid == vision) shared = p.mask;
        shared.set(0);
        session_->apply(session_->controller().plan_masks({{vision, shared, start_of(vision)}}, "share TPC 0 (test)"));
        QVERIFY(mask_in_registry(vision).startsWith("0,"));
        window_->floorplan()->setSelection(TpcMask::range(0, 0));
        selectRowOf(vision);
        window_->processTable()->setFocus();
        Confirmation seen;
        answer_confirmation(seen, true);
        QVERIFY(window_->processTable()->hasFocus());
        key(Qt::Key_Delete);
        QTRY_VERIFY2_WITH_TIMEOUT(seen.shown, qPrintable(window_->lastMessage()), 3000);
        QVERIFY2(seen.text.startsWith("Release TPC 0 from 1 process?"), qPrintable(seen.text));
        QVERIFY2(seen.text.contains(QString("%1  pid %2 (vision): TPC 0").arg(letter_of(vision)).arg(vision)), qPrintable(seen.text));
        QVERIFY2(!seen.text.contains(QString::number(llm)), qPrintable(seen.text));
        QTRY_COMPARE_WITH_TIMEOUT(mask_in_registry(vision), vision_before, 3000);
        QCOMPARE(mask_in_registry(llm), llm_before);
    }

    // The same letter for a process on its tiles, its legend chip and its table row.
    void oneLetterPerProcessInEveryView() {
        session_->refresh();
        const auto& owners = window_->floorplan()->scene().owners;
        QCOMPARE(owners.size(), std::size_t{4});
        QString letters;
        for (const FloorplanOwner& owner : owners) {
            letters += owner.letter;
            ProcessTableView* table = window_->processTable();
            for (int row = 0; row < table->model()->rowCount(); ++row) {
                const QModelIndex index = table->model()->index(row, 0);
                if (index.data(ProcessTableModel::PidRole).toInt() == owner.pid)
                    QCOMPARE(index.data(ProcessTableModel::LetterRole).toString(), QString(owner.letter));
            }
        }
        std::sort(letters.begin(), letters.end());
        QCOMPARE(letters, QString("ABCD"));
    }

    // Every window shortcut is bound once; F6, Shift+F6 and Ctrl+F are there and Delete is not window-wide.
    void noKeyIsBoundTwiceAndDeleteIsNotWindowWide() {
        QMap<QString, QString> owner;
        for (const QAction* action : window_->findChildren<QAction*>()) {
            if (action->shortcutContext() == Qt::WidgetShortcut) continue;
            for (const QKeySequence& sequence : action->shortcuts()) {
                const QString text = sequence.toString();
                QVERIFY2(!owner.contains(text), qPrintable(text + " is bound to both '" + owner.value(text) + "' and '" + action->text() + "'"));
                owner.insert(text, action->text());
            }
        }
        for (const char* expected : {"F6", "Shift+F6", "Ctrl+F"}) QVERIFY2(owner.contains(expected), expected);
        QVERIFY(!owner.contains("Del"));
    }

    // A real drag of a selected tile onto a process's letter chip in the legend gives it that TPC.
    void draggingOntoALetterChipGivesTheTpc() {
        if (QGuiApplication::platformName() == "offscreen") QSKIP("offscreen platform: QDrag does nothing; run under -platform minimal");
        FloorplanView* floorplan = window_->floorplan();
        const int vision = pid_of("vision");
        const QString before = mask_in_registry(vision);
        int chip = -1;
        for (std::size_t i = 0; i < floorplan->scene().owners.size(); ++i)
            if (floorplan->scene().owners[i].pid == vision) chip = static_cast<int>(i);
        QVERIFY(chip >= 0);
        const QPoint tile = floorplan->tileRectInWidget(7).center().toPoint();  // embeddings' (gpc7)
        QTest::mouseClick(floorplan, Qt::LeftButton, {}, tile);
        const QPoint target = floorplan->legendRectInWidget(chip).center().toPoint();
        QTimer::singleShot(100, [&] {
            QTest::mouseMove(floorplan, target);
            QTimer::singleShot(100, [&] {
                QTest::mouseMove(floorplan, target + QPoint(2, 0));
                QTimer::singleShot(100, [&] { QTest::mouseRelease(floorplan, Qt::LeftButton, {}, target + QPoint(2, 0)); });
            });
        });
        QTest::mousePress(floorplan, Qt::LeftButton, {}, tile);
        QTest::mouseMove(floorplan, tile + QPoint(30, 30));
        QTRY_VERIFY_WITH_TIMEOUT(mask_in_registry(vision) != before, 3000);
        QVERIFY(QString("," + mask_in_registry(vision) + ",").contains(",7,"));
        window_->undoStack()->undo();
        QCOMPARE(mask_in_registry(vision), before);
    }
};

QTEST_MAIN(WindowKeyboardTest)
#include "test_window_keyboard.moc"
