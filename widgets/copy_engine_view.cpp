#include "copy_engine_view.hpp"

#include <algorithm>

#include <QApplication>
#include <QFontInfo>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace gpupart::widgets {
namespace {

// Larger than the picture's natural size would only blow up its text: beyond this it stays centred.
constexpr double kMaxScale = 1.5;

}  // namespace

CopyEngineView::CopyEngineView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);  // hover highlighting without a button pressed
    setBackgroundRole(QPalette::Base);
    setAutoFillBackground(true);
}

void CopyEngineView::setGpu(const Gpu& gpu) {
    columns_ = layout_copy_engines(gpu, CopyEngineLayout::Flow::left_to_right);
    rows_ = layout_copy_engines(gpu, CopyEngineLayout::Flow::top_to_bottom);
    layout_ = columns_;
    hovered_ = -1;
    choose_layout();
    updateGeometry();
    update();
}

namespace {

double fit_scale(QSizeF picture, QSizeF room) {
    if (picture.isEmpty() || room.isEmpty()) return 0;
    return std::min({room.width() / picture.width(), room.height() / picture.height(), kMaxScale});
}

}  // namespace

double CopyEngineView::legibleScale() {
    // The engines' labels are 13 px in the picture: at this scale they are as large as the app's own text.
    return std::min(1.0, QFontInfo(QApplication::font()).pixelSize() / 13.0);
}

QSizeF CopyEngineView::room() const {
    // In a scroll area the room is its viewport (this widget grows to the layout's legible size inside it),
    // so the layout chosen does not follow the size that the choice itself set.
    const QWidget* around = parentWidget() != nullptr && parentWidget()->objectName() == "qt_scrollarea_viewport" ? parentWidget() : this;
    return QRectF(around->rect()).adjusted(4, 4, -4, -4).size();
}

void CopyEngineView::choose_layout() {
    const QSizeF room = this->room();
    const CopyEngineLayout& best = fit_scale(rows_.size, room) > fit_scale(columns_.size, room) ? rows_ : columns_;
    if (best.flow == layout_.flow) return;
    layout_ = best;
    hovered_ = -1;
    updateGeometry();  // the legible minimum is the new layout's
}

void CopyEngineView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    choose_layout();
}

double CopyEngineView::pictureScale() const { return fit_scale(layout_.size, QRectF(rect()).adjusted(4, 4, -4, -4).size()); }

QSize CopyEngineView::sizeHint() const { return layout_.size.toSize(); }
// Never smaller than legible: a smaller dock scrolls (the main window puts the view in a scroll area).
QSize CopyEngineView::minimumSizeHint() const { return (layout_.size * legibleScale()).toSize() + QSize(9, 9); }

QRectF CopyEngineView::pictureTarget() const {
    const QRectF all = QRectF(rect()).adjusted(4, 4, -4, -4);
    if (layout_.size.isEmpty()) return all;
    const double scale = std::min({all.width() / layout_.size.width(), all.height() / layout_.size.height(), kMaxScale});
    QRectF target(QPointF(0, 0), layout_.size * scale);
    target.moveCenter(all.center());
    return target;
}

const CopyEngineBox* CopyEngineView::boxAt(QPointF position) const {
    bool invertible = false;
    const QTransform back = copy_engine_transform(layout_.size, pictureTarget()).inverted(&invertible);
    return invertible ? layout_.box_at(back.map(position)) : nullptr;
}

void CopyEngineView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const CopyEngineBox* hovered = hovered_ >= 0 ? &layout_.boxes[static_cast<std::size_t>(hovered_)] : nullptr;
    paint_copy_engines(painter, pictureTarget(), layout_, hovered);
}

void CopyEngineView::mouseMoveEvent(QMouseEvent* event) {
    const CopyEngineBox* box = boxAt(event->position());
    const int now = box != nullptr ? static_cast<int>(box - layout_.boxes.data()) : -1;
    if (now != hovered_) {
        hovered_ = now;
        update();
    }
    QWidget::mouseMoveEvent(event);
}

void CopyEngineView::leaveEvent(QEvent* event) {
    if (hovered_ != -1) {
        hovered_ = -1;
        update();
    }
    QWidget::leaveEvent(event);
}

bool CopyEngineView::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        if (const CopyEngineBox* box = boxAt(help->pos())) {
            // The tooltip stays while the pointer is inside the box (mapped from picture to widget coordinates).
            const QRect area = copy_engine_transform(layout_.size, pictureTarget()).mapRect(box->rect).toAlignedRect();
            QToolTip::showText(help->globalPos(), box->tooltip, this, area);
        } else {
            QToolTip::hideText();
            event->ignore();
        }
        return true;
    }
    return QWidget::event(event);
}

}  // namespace gpupart::widgets
