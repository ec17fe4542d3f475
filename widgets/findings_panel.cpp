#include "findings_panel.hpp"

#include <algorithm>

#include <QHeaderView>
#include <QLabel>
#include <QStackedWidget>
#include <QStringList>
#include <QTreeView>
#include <QVBoxLayout>

#include "finding_explanation.hpp"
#include "findings_model.hpp"

namespace gpupart::widgets {

QString findings_summary(const std::vector<Finding>& findings) {
    int counts[3] = {0, 0, 0};
    for (const Finding& finding : findings) ++counts[static_cast<int>(finding.severity)];
    const char* names[3][2] = {{"error", "errors"}, {"warning", "warnings"}, {"note", "notes"}};
    QStringList parts;
    for (int i = 0; i < 3; ++i)
        if (counts[i] > 0) parts << QStringLiteral("%1 %2").arg(counts[i]).arg(QLatin1String(names[i][counts[i] == 1 ? 0 : 1]));
    return parts.isEmpty() ? QStringLiteral("No findings") : parts.join(QStringLiteral(", "));
}

FindingsPanel::FindingsPanel(QWidget* parent)
    : QWidget(parent),
      model_(new FindingsModel(this)),
      summary_(new QLabel(this)),
      pages_(new QStackedWidget(this)),
      list_(new QTreeView(pages_)),
      empty_(new QLabel(QStringLiteral("No findings"), pages_)) {
    list_->setModel(model_);
    list_->setRootIsDecorated(false);  // a flat list: no expander column
    list_->setUniformRowHeights(true);
    list_->setAlternatingRowColors(true);
    list_->setWordWrap(false);
    list_->setTextElideMode(Qt::ElideRight);
    // The message is what a reader needs: it stretches; the rule (a citation, its full text in the tooltip
    // and the explanation) gets what it needs up to a third of the width (fitColumns).
    list_->header()->setSectionResizeMode(FindingsModel::MessageColumn, QHeaderView::Stretch);
    list_->header()->setSectionResizeMode(FindingsModel::RuleColumn, QHeaderView::Interactive);
    list_->header()->setStretchLastSection(false);
    // Double-click or Enter on a finding explains it inside the app (meaning, reference, what to do), as
    // `gpupart top` does: no browser needed.
    connect(list_, &QTreeView::activated, this, [this](const QModelIndex& index) {
        const auto row = static_cast<std::size_t>(index.row());
        if (!index.isValid() || row >= model_->findings().size()) return;
        if (explanation_ == nullptr) {
            explanation_ = new FindingExplanation(this);
            explanation_->setOpensRuleDocs(opensRuleDocs_);
            connect(explanation_, &FindingExplanation::ruleDocRequested, this, &FindingsPanel::ruleDocRequested);
        }
        explanation_->showFinding(model_->findings()[row], index.data(FindingsModel::DocUrlRole).toUrl());
    });
    empty_->setAlignment(Qt::AlignCenter);
    // Framed and filled like the list it stands in for, so the panel does not jump when findings come.
    empty_->setFrameShape(QFrame::StyledPanel);
    empty_->setAutoFillBackground(true);
    empty_->setBackgroundRole(QPalette::Base);
    QPalette quiet = empty_->palette();  // grey, like a placeholder: a state, not a message
    // On a Base background a label writes in the Text role.
    quiet.setColor(QPalette::Text, quiet.color(QPalette::Disabled, QPalette::Text));
    empty_->setPalette(quiet);
    pages_->addWidget(empty_);
    pages_->addWidget(list_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    summary_->setContentsMargins(6, 0, 6, 0);
    layout->addWidget(summary_);
    layout->addWidget(pages_, 1);
    setFindings({});
}

void FindingsPanel::setFindings(const std::vector<Finding>& findings) {
    model_->setFindings(findings);
    summary_->setText(findings_summary(findings));
    summary_->setVisible(!findings.empty());  // "No findings" is already said in the middle
    pages_->setCurrentWidget(findings.empty() ? static_cast<QWidget*>(empty_) : list_);
    fitColumns();
}

void FindingsPanel::setOpensRuleDocs(bool on) {
    opensRuleDocs_ = on;
    if (explanation_ != nullptr) explanation_->setOpensRuleDocs(on);
}

void FindingsPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    fitColumns();
}

void FindingsPanel::fitColumns() {
    const int room = list_->viewport()->width();
    if (room <= 0) return;
    const int wanted = std::max(static_cast<const QAbstractItemView*>(list_)->sizeHintForColumn(FindingsModel::RuleColumn), list_->header()->sectionSizeHint(FindingsModel::RuleColumn));
    list_->header()->resizeSection(FindingsModel::RuleColumn, std::min(wanted, room / 3));
}

QString FindingsPanel::summaryText() const { return summary_->text(); }
bool FindingsPanel::showsNoFindings() const { return pages_->currentWidget() == empty_; }

}  // namespace gpupart::widgets
