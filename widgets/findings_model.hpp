#pragma once
// The controller's findings as a table: severity icon and message, then the rule it comes from. Errors
// come first (they are why a change is refused), then warnings, then notes, each group in the
// controller's order. The finding's id (for scripts) is in the tooltip.
#include <vector>

#include <QAbstractTableModel>
#include <QIcon>
#include <QUrl>

#include "controller/finding.hpp"

namespace gpupart::widgets {

class FindingsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { MessageColumn, RuleColumn, ColumnCount };
    static constexpr int SeverityRole = Qt::UserRole + 1;  // int(gpupart::Severity)
    static constexpr int IdRole = Qt::UserRole + 2;
    static constexpr int DocUrlRole = Qt::UserRole + 3;  // QUrl of the finding's entry in docs/rules.md

    explicit FindingsModel(QObject* parent = nullptr);

    // Called on every refresh (4 Hz): the same findings again change nothing, so selection and
    // scrolling survive; different ones replace the list.
    void setFindings(const std::vector<Finding>& findings);
    const std::vector<Finding>& findings() const { return findings_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<Finding> findings_;
};

// The style's standard message-box icon for a severity (critical, warning, information).
QIcon severity_icon(Severity severity);
// The entry for finding `id` in docs/rules.md (what it means, why, what to do): the installed copy next
// to the program, else the source tree's.
QUrl rules_doc_url(const QString& id);

}  // namespace gpupart::widgets
