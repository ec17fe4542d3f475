// FloorplanView's zoom and scrolling: the picture fitted to the view by default, or zoomed by the user
// (keys, Ctrl+wheel at the pointer) with scroll bars that appear only when it is larger than the view.
#include <cmath>

#include <QScrollBar>
#include <QWheelEvent>

#include "floorplan_view.hpp"

namespace gpupart::widgets {

void FloorplanView::layoutViewport() {
    // The scroll bars take room only when the picture needs them, and one may call for the other.
    const int bar_h = horizontal_->sizeHint().height();
    const int bar_w = vertical_->sizeHint().width();
    QRectF area(0, FloorplanView::kBannerHeight, width(), std::max(1, height() - FloorplanView::kBannerHeight));
    viewport_.setPicture(geometry_.size());
    bool need_h = false;
    bool need_v = false;
    for (int pass = 0; pass < 2; ++pass) {
        viewport_.setArea(area.adjusted(0, 0, need_v ? -bar_w : 0, need_h ? -bar_h : 0));
        need_h = viewport_.scrollRange().width() > 0.5;
        need_v = viewport_.scrollRange().height() > 0.5;
    }
    viewport_.setArea(area.adjusted(0, 0, need_v ? -bar_w : 0, need_h ? -bar_h : 0));
    const QRectF inner = viewport_.area();
    const QSizeF range = viewport_.scrollRange();
    const QPointF scroll = viewport_.scroll();
    const QSignalBlocker block_h(horizontal_);
    const QSignalBlocker block_v(vertical_);
    horizontal_->setVisible(need_h);
    vertical_->setVisible(need_v);
    horizontal_->setGeometry(0, height() - bar_h, static_cast<int>(inner.width()), bar_h);
    vertical_->setGeometry(width() - bar_w, FloorplanView::kBannerHeight, bar_w, static_cast<int>(inner.height()));
    horizontal_->setRange(0, static_cast<int>(range.width()));
    vertical_->setRange(0, static_cast<int>(range.height()));
    horizontal_->setPageStep(static_cast<int>(inner.width()));
    vertical_->setPageStep(static_cast<int>(inner.height()));
    horizontal_->setSingleStep(20);
    vertical_->setSingleStep(20);
    horizontal_->setValue(static_cast<int>(scroll.x()));
    vertical_->setValue(static_cast<int>(scroll.y()));
}

void FloorplanView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    layoutViewport();  // fitted, the picture follows the new size; zoomed, the scroll bars do
}

void FloorplanView::zoomAround(double new_scale, QPointF anchor) {
    viewport_.zoomTo(new_scale, anchor);
    layoutViewport();
    update();
    emit zoomChanged();
}

void FloorplanView::zoomIn() { zoomAround(scale() * FloorplanViewport::kStep, viewport_.area().center()); }
void FloorplanView::zoomOut() { zoomAround(scale() / FloorplanViewport::kStep, viewport_.area().center()); }

void FloorplanView::zoomToFit() {
    viewport_.fit();
    layoutViewport();
    update();
    emit zoomChanged();
}

void FloorplanView::wheelEvent(QWheelEvent* event) {
    const QPoint steps = event->angleDelta() / 120;
    if (event->modifiers() & Qt::ControlModifier) {  // zoom at the pointer, as image viewers do
        if (steps.y() != 0) zoomAround(scale() * std::pow(FloorplanViewport::kStep, steps.y()), event->position());
        event->accept();
        return;
    }
    // Without Ctrl the wheel scrolls a zoomed picture (shift: sideways); a fitted one lets it go to the parent.
    QScrollBar* bar = event->modifiers() & Qt::ShiftModifier || !vertical_->isVisible() ? horizontal_ : vertical_;
    if (!bar->isVisible()) return event->ignore();
    const int delta = steps.y() != 0 ? steps.y() : steps.x();
    bar->setValue(bar->value() - delta * 3 * bar->singleStep());
    event->accept();
}

}  // namespace gpupart::widgets
