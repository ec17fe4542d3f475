#include "findings_model.hpp"

#include <algorithm>

#include <QApplication>
#include <QFileInfo>
#include <QStyle>

#include "display_text.hpp"

namespace gpupart::widgets {
namespace {

QString qs(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())); }

}  // namespace

QUrl rules_doc_url(const QString& id) {
    // Installed: <prefix>/bin/gpupart-gui and <prefix>/share/doc/gpupart/docs/rules.md (packaging/CMakeLists.txt
    // installs docs/*.md). In a build tree: the source tree's copy.
    QString path = QCoreApplication::applicationDirPath() + QStringLiteral("/../share/doc/gpupart/docs/rules.md");
    if (!QFileInfo::exists(path)) path = QStringLiteral(GPUPART_SOURCE_RULES_DOC);
    QUrl url = QUrl::fromLocalFile(QFileInfo(path).absoluteFilePath());
    url.setFragment(id);
    return url;
}

QIcon severity_icon(Severity severity) {
    QStyle* style = QApplication::style();
    switch (severity) {
    case Severity::error: return style->standardIcon(QStyle::SP_MessageBoxCritical);
    case Severity::warning: return style->standardIcon(QStyle::SP_MessageBoxWarning);
    case Severity::info: return style->standardIcon(QStyle::SP_MessageBoxInformation);
    }
    return {};
}

FindingsModel::FindingsModel(QObject* parent) : QAbstractTableModel(parent) {}

void FindingsModel::setFindings(const std::vector<Finding>& findings) {
    std::vector<Finding> sorted = findings;
    // Severity's order is error, warning, info: the order a reader needs them in.
    std::stable_sort(sorted.begin(), sorted.end(), [](const Finding& a, const Finding& b) { return a.severity < b.severity; });
    if (sorted == findings_) return;
    beginResetModel();
    findings_ = std::move(sorted);
    endResetModel();
}

int FindingsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(findings_.size());
}

int FindingsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Finding& finding = findings_[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return index.column() == MessageColumn ? plain_text(finding.message) : plain_text(finding.rule);
    case Qt::DecorationRole:
        if (index.column() == MessageColumn) return severity_icon(finding.severity);
        return {};
    case Qt::ToolTipRole:
        return tooltip_text(QStringLiteral("%1: %2\nrule: %3\nid: %4\nWhat it means and what to do: docs/rules.md#%4 (double-click)")
                                .arg(qs(to_string(finding.severity)), plain_text(finding.message), plain_text(finding.rule), qs(finding.id)));
    case Qt::AccessibleTextRole:  // a screen reader cannot see the icon: say the severity
        return QStringLiteral("%1: %2").arg(qs(to_string(finding.severity)), plain_text(finding.message));
    case SeverityRole: return static_cast<int>(finding.severity);
    case IdRole: return qs(finding.id);
    case DocUrlRole: return finding.id.empty() ? QVariant() : QVariant(rules_doc_url(qs(finding.id)));
    default: return {};
    }
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section == MessageColumn) return QStringLiteral("Finding");
    if (section == RuleColumn) return QStringLiteral("Rule");
    return {};
}

}  // namespace gpupart::widgets
