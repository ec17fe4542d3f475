// The Scaling dock in the real window on the demo, end to end with the real `gpupart` (GPUPART_CLI): Measure
// on a demo worker walks its TPCs and puts them back, the curve appears in the panel, the Plan dialog
// previews and applies a rate target, and Ctrl+Z (the window's undo stack) reverts the plan's history entry.
#include <QDockWidget>
#include <QListWidget>
#include <QPushButton>
#include <QScatterSeries>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include "gui_session.hpp"
#include "main_window.hpp"
#include "plan_dialog.hpp"
#include "process_table_view.hpp"
#include "registry/registry.hpp"
#include "scaling_panel.hpp"

using namespace gpupart;
using namespace gpupart::gui;
using namespace gpupart::widgets;

namespace {

QString tpcs_of(const GuiSession& session, int pid) {
    for (const ProcessState& p : session.state().processes)
        if (p.pid == pid) return p.partitioned ? QString::fromStdString(p.mask.to_list()) : "all";
    return "gone";
}

void save_screenshot(QWidget* widget, const QString& name) {
    const QString dir = qEnvironmentVariable("GPUPART_SCREENSHOTS");
    if (dir.isEmpty()) return;
    QVERIFY(widget->grab().save(dir + "/" + name));
}

}  // namespace

class ScalingWindowTest : public QObject {
    Q_OBJECT
    QTemporaryDir home_;

private slots:
    void measureThenPlanThenUndo() {
        qputenv("XDG_CONFIG_HOME", home_.filePath("config").toUtf8());
        qputenv("XDG_STATE_HOME", home_.filePath("state").toUtf8());  // the curves the CLI saves and the panel reads
        SessionOptions options;
        options.demo = true;
        options.snapshot = "builtin:h200";
        GuiSession session(options);
        MainWindow window(session);
        window.resize(1500, 1000);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.setRefreshHz(0);
        ScalingPanel* panel = window.scaling();
        QCOMPARE(panel->curveDirectory(), home_.filePath("state") + "/gpupart/curves");
        window.raiseDock("dock-scaling");
        QTRY_VERIFY(panel->isVisible());
        QVERIFY(panel->showsEmptyState());

        int pid = 0;
        for (const ProcessRow& row : session.rows())
            if (row.command.contains("llm-serving")) pid = row.pid;
        QVERIFY(pid != 0);
        const QString before = tpcs_of(session, pid);
        window.processTable()->selectPid(pid);
        QVERIFY(panel->measureButton()->isEnabled());
        panel->setMeasureSteps(3, 400);  // a short walk: 3 counts of 0.4 s
        QSignalSpy finished(panel, &ScalingPanel::measureFinished);
        window.measureProcess(pid);
        QVERIFY(panel->measuring());
        QTest::qWait(600);
        save_screenshot(&window, "gui-scaling-measuring.png");
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 30000);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QCOMPARE(tpcs_of(session, pid), before);  // put back
        QCOMPARE(panel->curveList()->count(), 1);
        QVERIFY(panel->summaryText().contains("compute-intensive"));  // a demo worker's rate follows its TPCs
        QCOMPARE(panel->pointsSeries()->count(), 3);
        save_screenshot(&window, "gui-scaling.png");

        // Plan: a rate the worker reaches on about half its TPCs.
        PlanDialog* dialog = window.openPlanDialog();
        const CurveEntry& entry = panel->entries().front();
        int held = 0;
        for (const ProcessState& p : session.state().processes)
            if (p.pid == pid) held = p.mask.count();
        const double target = entry.fit->model.rate(held / 2);
        dialog->setTarget(pid, QString::number(target, 'f', 1));
        dialog->preview();
        QTRY_VERIFY_WITH_TIMEOUT(dialog->reply().has_value(), 20000);
        QVERIFY2(dialog->reply()->feasible, qPrintable(dialog->verdictText()));
        QVERIFY(dialog->applyButton()->isEnabled());
        dialog->resize(1200, 700);
        QTest::qWait(100);
        save_screenshot(dialog, "gui-plan-dialog.png");
        const int undo_before = window.undoStack()->count();
        dialog->apply();
        QTRY_VERIFY_WITH_TIMEOUT(dialog->reply()->applied, 20000);
        QTRY_COMPARE(window.undoStack()->count(), undo_before + 1);
        const QString planned = tpcs_of(session, pid);
        QVERIFY2(planned != before, qPrintable(planned));
        QCOMPARE(planned, dialog->resultTable()->item(0, 5)->text());
        window.undoStack()->undo();
        QVERIFY2(!window.lastMessageWasError(), qPrintable(window.lastMessage()));
        QCOMPARE(tpcs_of(session, pid), before);
        dialog->close();
    }
};

QTEST_MAIN(ScalingWindowTest)
#include "test_scaling_window.moc"
