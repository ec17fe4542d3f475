#pragma once
// The findings panel: the controller's findings about the current partitions or a proposed change,
// live. A one-line count on top ("1 error, 2 warnings"), the list below, or "No findings".
#include <vector>

#include <QUrl>
#include <QWidget>

#include "controller/finding.hpp"

class QLabel;
class QStackedWidget;
class QTreeView;

namespace gpupart::widgets {

class FindingExplanation;
class FindingsModel;

class FindingsPanel : public QWidget {
    Q_OBJECT
public:
    explicit FindingsPanel(QWidget* parent = nullptr);
    void setFindings(const std::vector<Finding>& findings);

    FindingsModel* model() const { return model_; }
    QTreeView* list() const { return list_; }
    QString summaryText() const;   // the line on top
    bool showsNoFindings() const;  // the "No findings" page is up
    // Double-click or Enter on a finding explains it here, in a dialog (its docs/rules.md entry, built in),
    // which can also open the document in the desktop's viewer: whether it does (tests turn it off and watch
    // ruleDocRequested).
    void setOpensRuleDocs(bool on);
    FindingExplanation* explanation() const { return explanation_; }  // null until a finding was activated

signals:
    void ruleDocRequested(const QUrl& url);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void fitColumns();  // the message gets the width; the rule (a citation) at most a third of it
    FindingsModel* model_;
    QLabel* summary_;
    QStackedWidget* pages_;
    QTreeView* list_;
    QLabel* empty_;
    bool opensRuleDocs_ = true;
    FindingExplanation* explanation_ = nullptr;
};

// "1 error, 2 warnings, 1 note"; "No findings" for none.
QString findings_summary(const std::vector<Finding>& findings);

}  // namespace gpupart::widgets
