#include "finding_explanation.hpp"

#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "controller/rules_doc.hpp"
#include "display_text.hpp"
#include "findings_model.hpp"

namespace gpupart::widgets {

FindingExplanation::FindingExplanation(QWidget* parent)
    : QDialog(parent),
      heading_(new QLabel(this)),
      body_(new QTextBrowser(this)),
      note_(new QLabel(this)),
      open_(new QPushButton("&Open docs/rules.md", this)) {
    setObjectName("finding-explanation");
    heading_->setTextFormat(Qt::PlainText);  // the message quotes command lines
    heading_->setWordWrap(true);
    heading_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    body_->setOpenLinks(false);  // the entry is plain text: nothing in it is followed
    note_->setTextFormat(Qt::PlainText);
    note_->setWordWrap(true);
    note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    note_->hide();
    open_->setToolTip("Open the whole document in the desktop's viewer");
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(open_, QDialogButtonBox::ActionRole);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(open_, &QPushButton::clicked, this, [this] {
        emit ruleDocRequested(url_);
        if (!opens_) return;
        if (!QDesktopServices::openUrl(url_)) {
            note_->setText(QString("No viewer opened it: the document is %1").arg(url_.toLocalFile()));
            note_->show();
        }
    });
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(heading_);
    layout->addWidget(body_, 1);
    layout->addWidget(note_);
    layout->addWidget(buttons);
    resize(640, 420);
}

void FindingExplanation::showFinding(const Finding& finding, const QUrl& doc_url) {
    url_ = doc_url;
    const QString id = QString::fromStdString(finding.id);
    setWindowTitle(QString("Finding %1 — gpupart").arg(id));
    heading_->setText(QString("%1: %2").arg(QString::fromUtf8(to_string(finding.severity).data(), static_cast<qsizetype>(to_string(finding.severity).size())), plain_text(finding.message)));
    const std::optional<std::string> entry = rules_entry(finding.id);
    // The entry is the program's own text (one paragraph per line): shown as plain text, a blank line between.
    QString body = entry ? QString::fromStdString(*entry).split('\n', Qt::SkipEmptyParts).join("\n\n")
                         : QString("This finding has no entry in docs/rules.md.");
    body += QString("\n\nRule: %1\nid: %2 (docs/rules.md#%2)").arg(plain_text(finding.rule), id);
    body_->setPlainText(body);
    note_->hide();
    open_->setEnabled(!doc_url.isEmpty());
    show();
    raise();
    activateWindow();
}

QString FindingExplanation::text() const { return heading_->text() + "\n" + body_->toPlainText() + (note_->isVisible() ? "\n" + note_->text() : QString()); }

}  // namespace gpupart::widgets
