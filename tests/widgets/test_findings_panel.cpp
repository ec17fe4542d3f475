// FindingsPanel / FindingsModel: severity order and icons, tooltips with the id, "No findings", no
// model reset when a refresh brings the same findings, and the real controller rules' findings on the
// recorded H200 for the screenshot.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QSignalSpy>
#include <QTest>
#include <QTextDocument>
#include <QTreeView>

#include <QPushButton>

#include "controller/rules.hpp"
#include "controller/rules_doc.hpp"
#include "finding_explanation.hpp"
#include "findings_model.hpp"
#include "findings_panel.hpp"
#include "screenshot.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

namespace {

std::vector<Finding> sample() {
    return {{Severity::info, "Bakita & Anderson, ECRTS 2025", "MPS serves 2 clients", "mps-clients"},
            {Severity::warning, "Bakita & Anderson, RTAS 2024, rule R4", "TPCs 9-16 are shared by processes 10 and 11", "overlap"},
            {Severity::error, "holes in the mask bits (measured on the H200)", "mask 62-63 has no real TPC: the kernel would never run", "no-real-tpc"},
            {Severity::warning, "Bakita & Anderson, RTAS 2023", "process 12 may use every TPC", "unpartitioned"}};
}

// What the controller's rules say about the recorded H200 with two processes whose masks overlap and
// no MPS server: real findings, not made-up text.
std::vector<Finding> h200_findings() {
    SystemState state;
    state.gpu = load_snapshot("builtin:h200").gpus.at(0);
    ProcessState a;
    a.pid = 4101;
    a.command = "python3 train.py";
    a.partitioned = true;
    a.mask = TpcMask::range(0, 16);
    ProcessState b = a;
    b.pid = 4102;
    b.command = "./infer --batch 8";
    b.mask = TpcMask::range(9, 25);
    ProcessState c = a;
    c.pid = 4103;
    c.command = "./etl";
    c.partitioned = false;
    state.processes = {a, b, c};
    return check_result(state);
}

}  // namespace

class TestFindingsPanel : public QObject {
    Q_OBJECT
private slots:
    void errorsFirstWithIconsAndIds() {
        FindingsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFindings(sample());
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.columnCount(), 2);
        const auto severity = [&](int row) { return static_cast<Severity>(model.index(row, 0).data(FindingsModel::SeverityRole).toInt()); };
        QCOMPARE(severity(0), Severity::error);
        QCOMPARE(severity(1), Severity::warning);
        QCOMPARE(severity(2), Severity::warning);
        QCOMPARE(severity(3), Severity::info);
        // The two warnings keep the controller's order.
        QCOMPARE(model.index(1, FindingsModel::MessageColumn).data().toString(), QStringLiteral("TPCs 9-16 are shared by processes 10 and 11"));
        QCOMPARE(model.index(2, FindingsModel::RuleColumn).data().toString(), QStringLiteral("Bakita & Anderson, RTAS 2023"));
        for (int row = 0; row < 4; ++row) {
            QVERIFY(!model.index(row, 0).data(Qt::DecorationRole).value<QIcon>().isNull());
            QVERIFY(model.index(row, 1).data(Qt::DecorationRole).isNull());  // one icon per row
        }
        // Always rich text (a message may quote "<b>" from a command line): the plain text, escaped.
        QCOMPARE(model.index(0, 1).data(Qt::ToolTipRole).toString(),
                 Qt::convertFromPlainText(QStringLiteral("error: mask 62-63 has no real TPC: the kernel would never run\nrule: holes in the mask bits (measured on the H200)\nid: no-real-tpc\n"
                                                         "What it means and what to do: docs/rules.md#no-real-tpc (double-click)"), Qt::WhiteSpaceNormal));
        QCOMPARE(model.index(3, 0).data(FindingsModel::IdRole).toString(), QStringLiteral("mps-clients"));
        // Icons are the style's own, one per severity.
        const auto image = [](const QIcon& icon) { return icon.pixmap(16, 16).toImage(); };
        QCOMPARE(image(model.index(0, 0).data(Qt::DecorationRole).value<QIcon>()), image(severity_icon(Severity::error)));
        QVERIFY(image(severity_icon(Severity::error)) != image(severity_icon(Severity::warning)));
    }

    void sameFindingsAgainDoNotResetTheModel() {
        FindingsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        model.setFindings(sample());
        QCOMPARE(resets.count(), 1);
        auto shuffled = sample();
        std::swap(shuffled[0], shuffled[2]);  // the same findings in another order: sorted, they are equal
        model.setFindings(shuffled);
        QCOMPARE(resets.count(), 1);
        model.setFindings({sample()[1]});
        QCOMPARE(resets.count(), 2);
        QCOMPARE(model.rowCount(), 1);
        model.setFindings({});
        QCOMPARE(model.rowCount(), 0);
    }

    void panelSaysNoFindingsWhenEmpty() {
        FindingsPanel panel;
        QVERIFY(panel.showsNoFindings());
        panel.setFindings(sample());
        QVERIFY(!panel.showsNoFindings());
        QCOMPARE(panel.summaryText(), QStringLiteral("1 error, 2 warnings, 1 note"));
        panel.setFindings({});
        QVERIFY(panel.showsNoFindings());
        QCOMPARE(findings_summary({}), QStringLiteral("No findings"));
        QVERIFY(gpupart::test::save_screenshot(panel, QStringLiteral("findings_panel_empty"), {560, 160}));
    }

    // Findings cited documents a user's clone does not have. Each links to its entry in docs/rules.md.
    void activatingAFindingOpensItsEntryInTheRulesDocument() {
        const auto findings = h200_findings();
        FindingsPanel panel;
        panel.setOpensRuleDocs(false);
        panel.setFindings(findings);
        QSignalSpy requested(&panel, &FindingsPanel::ruleDocRequested);
        const QModelIndex first = panel.model()->index(0, FindingsModel::MessageColumn);
        panel.list()->setCurrentIndex(first);
        QTest::keyClick(panel.list(), Qt::Key_Return);
        QVERIFY(panel.explanation() != nullptr);  // explained in the app first (see the test below)
        QCOMPARE(requested.count(), 0);
        panel.explanation()->openButton()->click();
        QCOMPARE(requested.count(), 1);
        const QUrl url = requested.first().first().toUrl();
        QCOMPARE(url.fragment(), first.data(FindingsModel::IdRole).toString());
        // The document is there and has an entry (a heading named by the id) for every finding shown.
        QFile doc(url.toLocalFile());
        QVERIFY2(doc.open(QIODevice::ReadOnly), qPrintable(url.toLocalFile()));
        const QString text = QString::fromUtf8(doc.readAll());
        for (const Finding& finding : findings)
            QVERIFY2(text.contains(QStringLiteral("\n## %1\n").arg(QString::fromStdString(finding.id))), finding.id.c_str());
    }

    // Double-click on a finding shows what it means inside the app (no browser needed), as `gpupart top`
    // does on Enter: the message, then its docs/rules.md entry (built in) and the rule.
    void doubleClickExplainsTheFindingInTheApp() {
        const auto findings = h200_findings();
        FindingsPanel panel;
        panel.setOpensRuleDocs(false);
        panel.setFindings(findings);
        panel.resize(600, 300);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QCOMPARE(panel.explanation(), nullptr);
        const QModelIndex first = panel.model()->index(0, FindingsModel::MessageColumn);
        const QPoint where = panel.list()->visualRect(first).center();
        QTest::mouseClick(panel.list()->viewport(), Qt::LeftButton, {}, where);
        QTest::mouseDClick(panel.list()->viewport(), Qt::LeftButton, {}, where);
        QVERIFY(panel.explanation() != nullptr);
        QTRY_VERIFY(panel.explanation()->isVisible());
        const Finding& shown = panel.model()->findings().front();
        const QString text = panel.explanation()->text();
        QVERIFY2(text.contains(QString::fromStdString(shown.message)), qPrintable(text));
        const auto entry = rules_entry(shown.id);
        QVERIFY(entry.has_value());
        const QString first_paragraph = QString::fromStdString(*entry).section('\n', 0, 0);
        QVERIFY2(first_paragraph.size() > 20 && text.contains(first_paragraph), qPrintable(text));
        QVERIFY(text.contains(QString::fromStdString(shown.rule)));
        QVERIFY(panel.explanation()->windowTitle().contains(QString::fromStdString(shown.id)));
    }

    // The finding's text gets the width; the rule (a citation) at most a third of the list.
    void theMessageGetsMoreWidthThanTheRule() {
        std::vector<Finding> findings = sample();
        findings[0].rule = "Bakita & Anderson, Hardware Compute Partitioning on NVIDIA GPUs for Composable Systems, ECRTS 2025, pitfall 8";
        FindingsPanel panel;
        panel.setFindings(findings);
        panel.resize(520, 240);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const int message = panel.list()->columnWidth(FindingsModel::MessageColumn);
        const int rule = panel.list()->columnWidth(FindingsModel::RuleColumn);
        QVERIFY2(message >= 2 * rule, qPrintable(QString("message %1 px, rule %2 px").arg(message).arg(rule)));
        QVERIFY2(rule <= panel.list()->viewport()->width() / 3 + 1, qPrintable(QString::number(rule)));
        panel.resize(1400, 240);  // wide: the rule gets its whole text, the message the rest
        QTRY_VERIFY(panel.list()->columnWidth(FindingsModel::RuleColumn) > rule);
        QVERIFY(panel.list()->columnWidth(FindingsModel::MessageColumn) > panel.list()->columnWidth(FindingsModel::RuleColumn));
    }

    void realControllerFindingsScreenshot() {
        const auto findings = h200_findings();
        QVERIFY(findings.size() >= 2);
        QVERIFY(std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.id == "overlap"; }));
        FindingsPanel panel;
        panel.setFindings(findings);
        QCOMPARE(panel.model()->rowCount(), static_cast<int>(findings.size()));
        QVERIFY(gpupart::test::save_screenshot(panel, QStringLiteral("findings_panel"), {900, 220}));
    }
};

QTEST_MAIN(TestFindingsPanel)
#include "test_findings_panel.moc"
