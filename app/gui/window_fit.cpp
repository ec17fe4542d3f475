#include "window_fit.hpp"

#include <algorithm>

#include <QFontMetrics>

namespace gpupart::gui {

QRect initial_window_geometry(const QRect& available) {
    const int width = std::min(available.width() * 85 / 100, 1600);
    const int height = std::min(available.height() * 85 / 100, 1000);
    QRect geometry(0, 0, width, height);
    geometry.moveCenter(available.center());
    return geometry;
}

QRect keep_on_screen(const QRect& window, const QRect& available) {
    QRect kept(window.topLeft(), window.size().boundedTo(available.size()));
    kept.moveLeft(std::clamp(kept.left(), available.left(), available.right() + 1 - kept.width()));
    kept.moveTop(std::clamp(kept.top(), available.top(), available.bottom() + 1 - kept.height()));
    return kept;
}

QString elide_at_word(const QString& text, const QFontMetrics& metrics, int width) {
    if (metrics.horizontalAdvance(text) <= width) return text;
    const QString ellipsis = QStringLiteral(" …");
    const int room = width - metrics.horizontalAdvance(ellipsis);
    // The longest prefix ending at a space that fits; trailing punctuation of a cut sentence is dropped.
    qsizetype cut = -1;
    for (qsizetype space = text.indexOf(' '); space > 0; space = text.indexOf(' ', space + 1)) {
        if (metrics.horizontalAdvance(text.left(space)) > room) break;
        cut = space;
    }
    if (cut <= 0) return metrics.elidedText(text, Qt::ElideRight, width);
    QString head = text.left(cut);
    while (!head.isEmpty() && QStringLiteral(",;:—-").contains(head.back())) head.chop(1);
    return head.trimmed() + ellipsis;
}

}  // namespace gpupart::gui

#include <QEvent>
#include <QHeaderView>
#include <QTableView>

namespace gpupart::gui {

SpareWidthColumn::SpareWidthColumn(QTableView* view, int column, int minimum)
    : QObject(view), view_(view), column_(column), minimum_(minimum) {
    view->horizontalHeader()->setStretchLastSection(false);
    view->viewport()->installEventFilter(this);
}

void SpareWidthColumn::fit() {
    const QHeaderView* header = view_->horizontalHeader();
    int others = 0;
    for (int i = 0; i < header->count(); ++i)
        if (i != column_ && !header->isSectionHidden(i)) others += header->sectionSize(i);
    view_->setColumnWidth(column_, std::max(minimum_, view_->viewport()->width() - others));
}

bool SpareWidthColumn::eventFilter(QObject* watched, QEvent* event) {
    if (watched == view_->viewport() && event->type() == QEvent::Resize) fit();
    return false;
}

}  // namespace gpupart::gui
