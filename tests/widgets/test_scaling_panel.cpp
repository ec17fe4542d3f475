// The Scaling panel and the Plan dialog on their own: curves from a temporary curve directory written with
// the real CurveStore, the series drawn from them, the empty state, Measure's Cancel (SIGINT to a stand-in
// gpupart that traps it) and a failing measure's one-line error, and the Plan dialog reading plan JSON.
#include <cmath>

#include <QFile>
#include <QLineSeries>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "cli_run.hpp"
#include "curve_store/curve_store.hpp"
#include "plan_dialog.hpp"
#include "scaling_panel.hpp"
#include "screenshot.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

namespace {

const std::string kGpu = "GPU-8a3c0f6e-0000-0000-0000-000000000001";
constexpr int kTpcs = 66;

// Points exactly on C(m) = a/m + b: the fit must give a and b back.
StoredCurve curve(const std::string& command, double a, double b, const std::string& when, const std::string& gpu = kGpu) {
    StoredCurve c;
    c.identity = {command, "alice", gpu};
    c.total_tpcs = kTpcs;
    c.measured = when;
    c.rate_meaning = "kernel launches + CUDA graph replays per second";
    for (const int m : {66, 52, 40, 28, 16, 4}) c.points.push_back(CurvePoint{m, 1.0 / (a / m + b), 2.0, 0});
    return c;
}

// A stand-in gpupart: a bash script (the test writes its body) that records its arguments.
QString write_script(const QTemporaryDir& dir, const QString& name, const QString& body) {
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return {};
    file.write(("#!/bin/bash\necho \"$@\" > " + dir.filePath(name + ".args") + "\n" + body).toUtf8());
    file.close();
    file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

QString read_file(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()).trimmed() : QString();
}

const char* kPlanJson = R"({
  "gpu": "GPU-8a3c0f6e-0000-0000-0000-000000000001", "total_tpcs": 66, "planned_tpcs": 66, "feasible": true,
  "reason": null, "closest_fraction": 1.25, "spare_tpcs": 20,
  "processes": [
    {"pid": 4101, "command": "python3 train.py", "class": "compute", "target": "4101=50%", "target_rate": 220.5,
     "partition": 0, "tpcs": 34, "mask": "0-33", "planned_rate": 231.0, "model_rate": 231.0, "in_conflict": false, "met": true},
    {"pid": 4102, "command": "copy --gib 1", "class": "memory", "target": "4102=80", "target_rate": 80,
     "partition": 1, "tpcs": 12, "mask": "34-45", "planned_rate": 95.5, "model_rate": 95.5, "in_conflict": false, "met": true}],
  "profile": null,
  "change": {"action": "plan 4101=50% 4102=80", "refused": false,
    "changes": [{"pid": 4101, "start_time": 98765, "command": "python3 train.py", "before_tpcs": "0-65", "after_tpcs": "0-33",
                 "after_mask": "0x000000000000000000000003ffffffff", "tpc_count": 34, "sm_count": 68}],
    "rules": null,
    "findings": [{"severity": "warning", "id": "no-mps", "rule": "R4", "message": "MPS is not running", "new": false},
                 {"severity": "info", "id": "idle-tpcs", "rule": "", "message": "20 TPCs idle", "new": true}]},
  "applied": false
})";

const char* kInfeasibleJson = R"({"gpu": "GPU-x", "total_tpcs": 66, "planned_tpcs": 66, "feasible": false,
  "reason": "two memory-intensive tasks cannot share a partition", "closest_fraction": 0.62, "spare_tpcs": 0,
  "processes": [{"pid": 7, "command": "a", "class": "memory", "target": "7=90%", "target_rate": 10, "partition": -1,
                 "tpcs": 0, "mask": null, "planned_rate": 6.2, "model_rate": 0, "in_conflict": true, "met": false}],
  "profile": null, "applied": false})";

}  // namespace

class ScalingPanelTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void listsCurvesThisGpuFirstAndDrawsPointsAndFit() {
        const QString curves = dir_.filePath("curves");
        const CurveStore store{curves.toStdString()};
        // Compute-like: b is 2% of a (Zahaf et al.'s (RTNS 2021) compute class); memory-like: b is 10 times a (saturates early).
        store.save(curve("python3 train.py", 0.066, 0.0013, "2026-11-25T10:00:00Z"));
        store.save(curve("copy --gib 1", 0.002, 0.02, "2026-11-25T11:00:00Z"));
        store.save(curve("python3 other.py", 0.066, 0.0013, "2026-11-25T12:00:00Z", "GPU-another"));
        ScalingPanel panel;
        panel.setGpu(QString::fromStdString(kGpu));
        panel.setCurveDirectory(curves);
        QVERIFY(!panel.showsEmptyState());
        QCOMPARE(panel.curveList()->count(), 3);
        // This GPU's first, newest first; the other GPU's last.
        QVERIFY(panel.curveList()->item(0)->text().startsWith("copy --gib 1"));
        QVERIFY(panel.curveList()->item(0)->text().contains("memory"));
        QVERIFY(panel.curveList()->item(1)->text().startsWith("python3 train.py"));
        QVERIFY(panel.curveList()->item(1)->text().contains("compute"));
        QVERIFY(panel.curveList()->item(2)->text().contains("other GPU"));

        panel.curveList()->setCurrentRow(1);
        QCOMPARE(panel.pointsSeries()->count(), 6);
        QCOMPARE(panel.pointsSeries()->at(0), QPointF(66, 1.0 / (0.066 / 66 + 0.0013)));
        QCOMPARE(panel.pointsSeries()->at(5).x(), 4.0);
        // The fit from the fewest measured TPCs to the GPU's, on the curve the points came from.
        QCOMPARE(panel.fitSeries()->count(), kTpcs - 4 + 1);
        for (const QPointF& p : panel.fitSeries()->points())
            QVERIFY2(std::abs(p.y() - 1.0 / (0.066 / p.x() + 0.0013)) < 1e-6 * p.y(), qPrintable(QString::number(p.x())));
        QVERIFY(panel.summaryText().contains("compute-intensive"));
        QVERIFY(panel.summaryText().contains("a = 66 ms × TPC"));
        QVERIFY(panel.summaryText().contains("b = 1.3 ms"));
        QVERIFY(panel.summaryText().contains("R² 1.000"));
        QVERIFY(panel.summaryText().contains("kernel launches + CUDA graph replays per second"));
        QVERIFY(test::save_screenshot(panel, "scaling-panel-compute", QSize(900, 420)));

        panel.curveList()->setCurrentRow(0);
        QVERIFY(panel.summaryText().contains("memory-intensive"));
        // Saturated: the fitted rate at the whole GPU is within a few % of the rate at half of it.
        const auto fit = panel.fitSeries()->points();
        QVERIFY(fit.back().y() / fit[kTpcs / 2 - 4].y() < 1.1);
        QVERIFY(test::save_screenshot(panel, "scaling-panel-memory", QSize(900, 420)));
    }

    void emptyStateSaysHowToMeasure() {
        ScalingPanel panel;
        panel.setCurveDirectory(dir_.filePath("none-yet"));
        QVERIFY(panel.showsEmptyState());
        QVERIFY(panel.emptyStateText().contains("Select a process and press <b>Measure</b>"));
        QVERIFY(panel.emptyStateText().contains("gpupart measure PID"));
        QVERIFY(panel.emptyStateText().contains(dir_.filePath("none-yet")));
        QVERIFY(!panel.measureButton()->isEnabled());  // nothing selected
        panel.setSelectedProcess(1234, "python3 train.py");
        QVERIFY(panel.measureButton()->isEnabled());
        QVERIFY(test::save_screenshot(panel, "scaling-panel-empty", QSize(900, 320)));
    }

    void cancelSendsSigintAndWaitsForTheTpcsToGoBack() {
        const QString marker = dir_.filePath("interrupted");
        // Like gpupart measure: on SIGINT it puts the TPCs back, says so in its JSON, and ends.
        const QString cli = write_script(dir_, "measure-stand-in",
                                         "trap 'touch " + marker + "; echo \"{\\\"restored\\\": true}\"; exit 0' INT\n"
                                         "while true; do sleep 0.05; done\n");
        ScalingPanel panel;
        panel.setCurveDirectory(dir_.filePath("cancel-curves"));
        panel.setCliPath(cli);
        panel.setCliArguments({"--gpu", "GPU-x"});
        panel.setSelectedProcess(4101, "python3 train.py");
        panel.resize(900, 320);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QTest::mouseClick(panel.measureButton(), Qt::LeftButton);
        QVERIFY(panel.measuring());
        QVERIFY(panel.cancelButton()->isVisible());
        QVERIFY(panel.progressBar()->isVisible());
        QVERIFY(!panel.measureButton()->isVisible());
        QTRY_VERIFY(panel.progressBar()->value() > 0);
        QTRY_COMPARE(read_file(dir_.filePath("measure-stand-in.args")), QString("measure 4101 --gpu GPU-x --steps 6 --dwell 2000 --json"));
        QVERIFY(test::save_screenshot(panel, "scaling-panel-measuring", QSize(900, 320)));
        QVERIFY(!QFile::exists(marker));
        QTest::mouseClick(panel.cancelButton(), Qt::LeftButton);
        QTRY_VERIFY(!panel.measuring());
        QVERIFY(QFile::exists(marker));  // it got SIGINT (a SIGKILL runs no trap)
        QVERIFY(panel.statusText().contains("cancelled; its TPCs were put back"));
        QVERIFY(panel.measureButton()->isVisible());
        QVERIFY(!panel.cancelButton()->isVisible());
    }

    void aFailedMeasureShowsTheCliLine() {
        const QString cli = write_script(dir_, "measure-fails",
                                         "echo 'gpupart: note: journal line 3 is not an entry' >&2\n"
                                         "echo 'gpupart: process 4101 is not a live partitioned process on GPU GPU-x (see `gpupart list`)' >&2\n"
                                         "exit 1\n");
        ScalingPanel panel;
        panel.setCurveDirectory(dir_.filePath("fail-curves"));
        panel.setCliPath(cli);
        QSignalSpy finished(&panel, &ScalingPanel::measureFinished);
        QVERIFY(panel.measure(4101));
        QTRY_COMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).toBool(), false);
        QCOMPARE(panel.statusText(), QString("gpupart: process 4101 is not a live partitioned process on GPU GPU-x (see `gpupart list`)"));
    }

    void planReplyIsReadField() {
        const auto reply = parse_plan_reply(kPlanJson);
        QVERIFY(reply);
        QVERIFY(reply->feasible);
        QCOMPARE(reply->planned_tpcs, 66);
        QCOMPARE(reply->spare_tpcs, 20);
        QCOMPARE(reply->processes.size(), std::size_t{2});
        QCOMPARE(reply->processes[0].mask, QString("0-33"));
        QCOMPARE(reply->processes[1].intensity, QString("memory"));
        QCOMPARE(reply->processes[1].planned_rate, 95.5);
        QVERIFY(reply->has_change);
        QCOMPARE(reply->changes.size(), std::size_t{1});
        QCOMPARE(reply->changes[0].start_time, quint64{98765});
        QCOMPARE(reply->changes[0].after_mask, QString("0x000000000000000000000003ffffffff"));
        QCOMPARE(reply->findings.size(), std::size_t{2});
        QVERIFY(!reply->journal_id);

        const auto infeasible = parse_plan_reply(kInfeasibleJson);
        QVERIFY(infeasible);
        QVERIFY(!infeasible->feasible);
        QVERIFY(!infeasible->has_change);
        QCOMPARE(infeasible->processes[0].partition, -1);
        QVERIFY(plan_verdict(*infeasible).contains("two memory-intensive tasks cannot share a partition"));
        QVERIFY(plan_verdict(*infeasible).contains("62.0%"));

        QString problem;
        QVERIFY(!parse_plan_reply("gpupart: no", &problem));
        QVERIFY(problem.contains("no JSON"));
        QVERIFY(!parse_plan_reply("{\"pid\": 3}", &problem));
        QVERIFY(problem.contains("no plan"));
    }

    void planDialogShowsTheReplyAndAppliesWhatWasPreviewed() {
        const QString reply_file = dir_.filePath("plan.json");
        QFile file(reply_file);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(kPlanJson);
        file.close();
        const QString cli = write_script(dir_, "plan-stand-in", "cat " + reply_file + "\n");
        PlanDialog dialog;
        dialog.setCandidates({{4101, "4101 python3 train.py", "compute", 441}, {4102, "4102 copy --gib 1", "memory", 120}});
        dialog.setCliPath(cli);
        dialog.setCliArguments({"--gpu", "GPU-x"});
        dialog.setTarget(4101, "50%");
        dialog.setTarget(4102, " 80 ");
        QCOMPARE(dialog.targets(), QStringList({"4101=50%", "4102=80"}));
        QVERIFY(!dialog.applyButton()->isEnabled());
        dialog.preview();
        QTRY_VERIFY(dialog.reply().has_value());
        QCOMPARE(read_file(dir_.filePath("plan-stand-in.args")), QString("plan --target 4101=50% --target 4102=80 --gpu GPU-x --json"));
        QCOMPARE(dialog.resultTable()->rowCount(), 2);
        QCOMPARE(dialog.resultTable()->item(0, 4)->text(), QString("34"));
        QCOMPARE(dialog.resultTable()->item(0, 5)->text(), QString("0-33"));
        QCOMPARE(dialog.resultTable()->item(1, 7)->text(), QString("yes"));
        QVERIFY(dialog.verdictText().contains("Every target is met"));
        QVERIFY(dialog.findingLines().contains("warning: MPS is not running"));
        QVERIFY(dialog.findingLines().contains("new info: 20 TPCs idle"));
        QVERIFY(dialog.applyButton()->isEnabled());
        // A target edited after the preview: Apply waits for a new preview.
        dialog.setTarget(4102, "90");
        QVERIFY(!dialog.applyButton()->isEnabled());
        dialog.preview();
        QTRY_VERIFY(dialog.applyButton()->isEnabled());
        dialog.apply();
        QTRY_VERIFY(!dialog.running());
        QCOMPARE(read_file(dir_.filePath("plan-stand-in.args")), QString("plan --target 4101=50% --target 4102=90 --gpu GPU-x --json --apply"));

        const auto infeasible = parse_plan_reply(kInfeasibleJson);
        dialog.showReply(*infeasible, false);
        QVERIFY(!dialog.applyButton()->isEnabled());
        QCOMPARE(dialog.resultTable()->item(0, 5)->text(), QString("-"));
        QCOMPARE(dialog.resultTable()->item(0, 7)->text(), QString("no"));
        QVERIFY(dialog.verdictText().contains("cannot all be met"));
    }
};

QTEST_MAIN(ScalingPanelTest)
#include "test_scaling_panel.moc"
