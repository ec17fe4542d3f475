// Hostile text in the GUI: a command line (or a finding that quotes one) holding control bytes,
// bytes that are not UTF-8, or HTML is shown escaped in the process table and the findings, and its
// tooltips (rich text in Qt) show "<b>" as text, never as bold.
#include <QLabel>
#include <QTest>
#include <QTextDocument>
#include <QTreeView>
#include <QVBoxLayout>

#include "findings_model.hpp"
#include "process_rows.hpp"
#include "process_table_model.hpp"
#include "screenshot.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

namespace {

const std::string kHostile = "evil \x1b]0;PWNED\a\x1b[2J<b>bold</b> & <img src=x>\r\xc2\x9b" "31m \xff";
const QString kEscaped = QStringLiteral("evil \\x1b]0;PWNED\\x07\\x1b[2J<b>bold</b> & <img src=x>\\r\\u{009b}31m \\xff");

// What a person sees of a tooltip: Qt renders it as HTML when it looks like HTML.
QString shown(const QString& tooltip) {
    if (!Qt::mightBeRichText(tooltip)) return tooltip;
    QTextDocument document;
    document.setHtml(tooltip);
    return document.toPlainText();
}

bool plain(const QString& text) {
    for (const QChar c : text)
        if (c.unicode() < 0x20 || (c.unicode() >= 0x7f && c.unicode() <= 0x9f) || c == QChar::ReplacementCharacter) return false;
    return true;
}

SystemState hostile_state() {
    SystemState state;
    state.gpu = load_snapshot("builtin:h200").gpus.at(0);
    ProcessState process;
    process.pid = 4242;
    process.command = kHostile;
    process.partitioned = true;
    process.mask = TpcMask::range(0, 8);
    state.processes.push_back(process);
    return state;
}

}  // namespace

class TestHostileText : public QObject {
    Q_OBJECT
private slots:
    void processTableEscapesTheCommandLineAndItsTooltip() {
        ProcessTableModel model;
        LaunchRates rates(std::chrono::milliseconds(250));
        model.setRows(process_rows(hostile_state(), rates, LaunchRates::Clock::now()));
        const QModelIndex command = model.index(0, ProcessTableModel::command);
        QCOMPARE(model.data(command).toString(), kEscaped);
        QVERIFY(plain(model.data(command).toString()));
        const QString tip = model.data(command, Qt::ToolTipRole).toString();
        QCOMPARE(shown(tip).trimmed(), kEscaped);
        QVERIFY(!tip.contains(QStringLiteral("<b>bold")));
    }

    void findingsEscapeTheirMessageAndTooltip() {
        FindingsModel model;
        model.setFindings({{Severity::warning, "Bakita & Anderson, ECRTS 2025", "process 4242 (" + kHostile + ") shares TPCs", "overlap"}});
        const QModelIndex message = model.index(0, FindingsModel::MessageColumn);
        QCOMPARE(model.data(message).toString(), "process 4242 (" + kEscaped + ") shares TPCs");
        QVERIFY(shown(model.data(message, Qt::ToolTipRole).toString()).contains(kEscaped));
    }

    void screenshot() {
        ProcessTableModel model;
        LaunchRates rates(std::chrono::milliseconds(250));
        model.setRows(process_rows(hostile_state(), rates, LaunchRates::Clock::now()));
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        auto* table = new QTreeView(&window);
        table->setModel(&model);
        table->setColumnWidth(ProcessTableModel::command, 620);
        layout->addWidget(table);
        // The tooltip as Qt draws one (a rich-text label), below the table.
        auto* tip = new QLabel(model.data(model.index(0, ProcessTableModel::command), Qt::ToolTipRole).toString(), &window);
        tip->setStyleSheet(QStringLiteral("background: #ffffdc; border: 1px solid #999; padding: 4px"));
        layout->addWidget(tip);
        QVERIFY(gpupart::test::save_screenshot(window, QStringLiteral("hostile_text"), QSize(900, 220)));
    }
};

QTEST_MAIN(TestHostileText)
#include "test_hostile_text.moc"
