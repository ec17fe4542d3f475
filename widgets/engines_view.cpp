#include "engines_view.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

#include "engines_model.hpp"

namespace gpupart::widgets {

QString engines_summary(const Gpu& gpu) {
    if (gpu.engines.empty()) return QStringLiteral("No engine table for this GPU: no source gave one.");
    std::set<int> runlists;
    std::map<std::string, int> unknown;  // reason -> engines
    for (const Engine& engine : gpu.engines) {
        if (engine.runlist.known()) runlists.insert(*engine.runlist.value);
        else ++unknown[engine.runlist.unknown_reason];
    }
    const int placed = static_cast<int>(gpu.engines.size()) - [&] {
        int total = 0;
        for (const auto& entry : unknown) total += entry.second;
        return total;
    }();
    QString text = QStringLiteral("%1 engines · %2 on %3 runlists").arg(gpu.engines.size()).arg(placed).arg(runlists.size());
    for (const auto& [reason, count] : unknown)
        text += QStringLiteral(" · %1 with runlist unknown: %2")
                    .arg(count)
                    .arg(reason.empty() ? QStringLiteral("no reason given") : QString::fromStdString(reason));
    return text;
}

EnginesView::EnginesView(QWidget* parent)
    : QWidget(parent), model_(new EnginesModel(this)), tree_(new QTreeView(this)), summary_(new QLabel(this)) {
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    tree_->setModel(model_);
    tree_->setUniformRowHeights(true);  // all rows are one line: lets the view skip measuring each
    tree_->setAlternatingRowColors(true);
    tree_->setSelectionBehavior(QAbstractItemView::SelectRows);
    tree_->header()->setStretchLastSection(true);  // the source column takes what is left
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    summary_->setContentsMargins(6, 0, 6, 0);
    layout->addWidget(summary_);
    layout->addWidget(tree_, 1);
}

void EnginesView::setGpu(const Gpu& gpu) {
    model_->setGpu(gpu);
    summary_->setText(engines_summary(gpu));
    // Headings of engines with an unknown runlist, and notes saying what was not read, are sentences:
    // they span the row instead of widening the name column for everyone.
    const auto span_sentences = [this](const QModelIndex& parent, const auto& self) -> void {
        for (int row = 0; row < model_->rowCount(parent); ++row) {
            const QModelIndex index = model_->index(row, 0, parent);
            const auto kind = static_cast<EnginesModel::RowKind>(index.data(EnginesModel::RowKindRole).toInt());
            if (kind == EnginesModel::RowKind::unknown_runlist || kind == EnginesModel::RowKind::note)
                tree_->setFirstColumnSpanned(row, parent, true);
            self(index, self);
        }
    };
    span_sentences({}, span_sentences);
    // Every level is short (a few runlists, a few engines each): open, it reads as a table.
    tree_->expandAll();
    // Columns fit their contents up to a cap, so a long "unknown" reason never pushes the source off screen
    // (the full text is in the tooltip).
    const int caps[] = {220, 160, 160};
    for (int column = 0; column < EnginesModel::SourceColumn; ++column) {
        tree_->resizeColumnToContents(column);
        tree_->setColumnWidth(column, std::min(tree_->columnWidth(column), caps[column]));
    }
}

}  // namespace gpupart::widgets
