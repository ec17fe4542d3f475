#pragma once
// A finding explained inside the app (double-click or Enter in the findings panel): its severity and message,
// then its entry of docs/rules.md, built into the program (what it means, why, with its reference, and what to
// do), as `gpupart top` shows it on Enter. The installed document can still be opened in the desktop's viewer;
// when none opens it, the dialog says where the file is instead of doing nothing.
#include <QDialog>
#include <QUrl>

#include "controller/finding.hpp"

class QLabel;
class QPushButton;
class QTextBrowser;

namespace gpupart::widgets {

class FindingExplanation : public QDialog {
    Q_OBJECT
public:
    explicit FindingExplanation(QWidget* parent = nullptr);
    void showFinding(const Finding& finding, const QUrl& doc_url);
    QString text() const;  // what it shows, as plain text (tests)
    QPushButton* openButton() const { return open_; }
    // Whether the button hands the document to the desktop's viewer (tests turn it off and watch the signal).
    void setOpensRuleDocs(bool on) { opens_ = on; }

signals:
    void ruleDocRequested(const QUrl& url);

private:
    QLabel* heading_;
    QTextBrowser* body_;
    QLabel* note_;
    QPushButton* open_;
    QUrl url_;
    bool opens_ = true;
};

}  // namespace gpupart::widgets
