#include "floorplan_view.hpp"

#include <algorithm>

#include <QApplication>
#include <QContextMenuEvent>
#include <QDrag>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QPainter>
#include <QToolTip>

#include "floorplan_painter.hpp"
#include "model/gpu_queries.hpp"

namespace gpupart::widgets {
namespace {

// The TPCs of the floorplan's rectangle from tile `a` to tile `b` (shift-click and shift+arrow extend a
// selection so, as the rubber band does): the tiles a person sees between them, whatever their numbers (TPC
// numbers run across GPCs, so a range of numbers would take TPCs of every GPC).
TpcMask range_between(const FloorplanGeometry& geometry, int a, int b) {
    const FloorplanTile* from = geometry.tile_for_key(a);
    const FloorplanTile* to = geometry.tile_for_key(b);
    if (from == nullptr || to == nullptr) return {};
    // Inset by a pixel: the tiles beside the rectangle only touch its edges' gaps and stay out.
    return geometry.tpcs_in(from->rect.united(to->rect).adjusted(1, 1, -1, -1));
}

}  // namespace

FloorplanView::FloorplanView(QWidget* parent)
    : QWidget(parent), horizontal_(new QScrollBar(Qt::Horizontal, this)), vertical_(new QScrollBar(Qt::Vertical, this)) {
    for (QScrollBar* bar : {horizontal_, vertical_}) {
        bar->hide();
        bar->setCursor(Qt::ArrowCursor);
        connect(bar, &QScrollBar::valueChanged, this, [this] {
            viewport_.setScroll(QPointF(horizontal_->value(), vertical_->value()));
            update();
        });
    }
    setFocusPolicy(Qt::StrongFocus);
    setAcceptDrops(true);
    setMouseTracking(false);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setAccessibleName("GPU floorplan");
}

void FloorplanView::setGpu(const Gpu& gpu, const QString& title) {
    gpu_ = gpu;
    scene_.gpu = &gpu_;
    scene_.title = title;
    scene_.selection = scene_.selection & real_tpcs(gpu_);
    if (scene_.focus && find_tpc(gpu_, *scene_.focus) == nullptr) scene_.focus.reset();
    geometry_ = FloorplanGeometry::layout(gpu_, scene_.legend_entry_count(), static_cast<int>(scene_.owners.size()));
    layoutViewport();
    updateGeometry();
    update();
}

void FloorplanView::setGrants(std::vector<FloorplanGrant> grants) {
    if (grants == scene_.grants) return;  // as setOwners: repaint only on a change
    scene_.grants = std::move(grants);
    update();
}

void FloorplanView::setOwners(std::vector<FloorplanOwner> owners) {
    // Called at every refresh (4 Hz); owners change only with a partition, and a repaint of the whole
    // floorplan is the largest cost of an idle refresh.
    if (owners == scene_.owners) return;
    const bool legend_changed = owners.size() != scene_.owners.size();
    scene_.owners = std::move(owners);
    if (legend_changed && scene_.gpu != nullptr) {
        geometry_ = FloorplanGeometry::layout(gpu_, scene_.legend_entry_count(), static_cast<int>(scene_.owners.size()));
        layoutViewport();
    }
    update();
}

void FloorplanView::setSelection(const TpcMask& tpcs) {
    changeSelection(scene_.gpu != nullptr ? tpcs & real_tpcs(gpu_) : TpcMask{});
}

void FloorplanView::changeSelection(const TpcMask& tpcs) {
    if (tpcs == scene_.selection) return;
    scene_.selection = tpcs;
    update();
    emit selectionChanged();
}

QPointF FloorplanView::toPicture(QPointF widget_point) const { return (widget_point - offset()) / scale(); }

QRectF FloorplanView::tileRectInWidget(int tpc_key) const {
    const FloorplanTile* tile = geometry_.tile_for_key(tpc_key);
    if (tile == nullptr) return {};
    return QRectF(offset() + tile->rect.topLeft() * scale(), tile->rect.size() * scale());
}

QRectF FloorplanView::legendRectInWidget(int index) const {
    const QRectF r = geometry_.legend_entry(index);
    return QRectF(offset() + r.topLeft() * scale(), r.size() * scale());
}

QRectF FloorplanView::headerRectInWidget(std::optional<int> gpc) const {
    for (const FloorplanGpcBox& box : geometry_.boxes())
        if (box.gpc == gpc) return QRectF(offset() + box.header.topLeft() * scale(), box.header.size() * scale());
    return {};
}

QSize FloorplanView::sizeHint() const {
    return (geometry_.size().isEmpty() ? QSizeF(640, 400) : geometry_.size() + QSizeF(0, kBannerHeight)).toSize();
}

QSize FloorplanView::minimumSizeHint() const { return {320, 200}; }

void FloorplanView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().base());
    if (scene_.gpu != nullptr) {
        painter.save();
        painter.translate(offset());
        painter.scale(scale(), scale());
        paint_floorplan(painter, geometry_, scene_);
        painter.restore();
    }
    // The banner last, over a zoomed picture scrolled up under it (the painter clips by its own rules). It
    // says what a drop would do (or why it is refused), otherwise how to use the view; the zoom at its right.
    const QRect banner(0, 0, width(), kBannerHeight);
    QColor banner_color = palette().alternateBase().color();
    const QString zoom_text = viewport_.fits() ? QString("fit %1%").arg(qRound(scale() * 100))
                                               : QString("%1% (Ctrl+0 fits)").arg(qRound(scale() * 100));
    const int zoom_width = painter.fontMetrics().horizontalAdvance(zoom_text) + 16;
    const QString select_hint = hasFocus() ? "Arrows move the tile cursor, Space selects, Shift+arrows extend, G takes its GPC"
                                           : "Click, shift/ctrl-click, drag a box or click a GPC header to select TPCs";
    QString banner_text = scene_.selection.empty()
                              ? (idle_hint_.isEmpty() ? select_hint : idle_hint_)
                              : QString("%1 TPC%2 selected (%3 SMs): drag onto a process or \"free\", or press "
                                        "Enter to give them, Delete to release them")
                                    .arg(scene_.selection.count())
                                    .arg(scene_.selection.count() == 1 ? "" : "s")
                                    .arg(static_cast<int>(sms_of(gpu_, scene_.selection).size()));
    if (!drop_message_.isEmpty()) {
        banner_color = !drop_allowed_ ? QColor(0xff, 0xcd, 0xd2) : drop_warning_ ? QColor(0xff, 0xec, 0xb3)
                                                                                  : QColor(0xc8, 0xe6, 0xc9);
        banner_text = drop_message_;
    }
    painter.fillRect(banner, banner_color);
    painter.setPen(palette().text().color());
    painter.drawText(banner.adjusted(8, 0, -zoom_width, 0), Qt::AlignVCenter | Qt::AlignLeft,
                     painter.fontMetrics().elidedText(banner_text, Qt::ElideRight, banner.width() - 16 - zoom_width));
    painter.setPen(palette().placeholderText().color());
    painter.drawText(banner.adjusted(8, 0, -8, 0), Qt::AlignVCenter | Qt::AlignRight, zoom_text);
    if (hasFocus()) {  // where the keys go: a frame in the style's highlight colour around the whole view
        painter.setPen(QPen(palette().highlight().color(), 3));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(QRectF(rect()).adjusted(1.5, 1.5, -1.5, -1.5));
    }
}

void FloorplanView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || scene_.gpu == nullptr) return QWidget::mousePressEvent(event);
    setFocus(Qt::MouseFocusReason);
    press_position_ = event->position().toPoint();
    const QPointF point = toPicture(event->position());
    const Qt::KeyboardModifiers modifiers = event->modifiers();
    press_tile_ = geometry_.tpc_at(point);
    press_on_selected_ = press_tile_ && scene_.selection.test(*press_tile_);
    if (press_tile_) {
        scene_.focus = press_tile_;
        if (modifiers & Qt::ShiftModifier && anchor_) {
            changeSelection((modifiers & Qt::ControlModifier ? scene_.selection : TpcMask{}) |
                            range_between(geometry_, *anchor_, *press_tile_));
        } else if (modifiers & Qt::ControlModifier) {
            TpcMask toggled = scene_.selection;
            toggled.set(*press_tile_, !toggled.test(*press_tile_));
            changeSelection(toggled);
            anchor_ = press_tile_;
        } else if (!press_on_selected_) {  // a press on the selection may start a drag of all of it
            TpcMask only;
            only.set(*press_tile_);
            changeSelection(only);
            anchor_ = press_tile_;
        }
        update();
        return;
    }
    if (const FloorplanGpcBox* header = geometry_.header_at(point)) {
        const TpcMask gpc = geometry_.tpcs_of_box(*header);
        changeSelection(modifiers & Qt::ControlModifier ? scene_.selection | gpc : gpc);
        press_on_selected_ = true;  // dragging from a header drags the GPC
        press_tile_ = gpc.empty() ? std::nullopt : std::optional<int>(gpc.bits().front());
        return;
    }
    // Empty space: a rubber band, adding to the selection with ctrl.
    selection_before_band_ = modifiers & Qt::ControlModifier ? scene_.selection : TpcMask{};
    if (band_ == nullptr) band_ = new QRubberBand(QRubberBand::Rectangle, this);
    band_->setGeometry(QRect(press_position_, QSize()));
    band_->show();
    changeSelection(selection_before_band_);
}

void FloorplanView::mouseMoveEvent(QMouseEvent* event) {
    if (!(event->buttons() & Qt::LeftButton)) return;
    const QPoint position = event->position().toPoint();
    if (band_ != nullptr && band_->isVisible()) {
        const QRect area = QRect(press_position_, position).normalized();
        band_->setGeometry(area);
        const QRectF picture_area(toPicture(area.topLeft()), toPicture(area.bottomRight()));
        changeSelection(selection_before_band_ | geometry_.tpcs_in(picture_area));
        return;
    }
    if (press_on_selected_ && (position - press_position_).manhattanLength() >= QApplication::startDragDistance())
        startDrag();
}

void FloorplanView::mouseReleaseEvent(QMouseEvent* event) {
    if (band_ != nullptr && band_->isVisible()) {
        band_->hide();
        return;
    }
    // A click (no drag) on a tile of a multi-selection selects just that tile, as file managers do.
    if (press_on_selected_ && press_tile_ && !(event->modifiers() & (Qt::ShiftModifier | Qt::ControlModifier)) &&
        geometry_.tpc_at(toPicture(event->position())) == press_tile_) {
        TpcMask only;
        only.set(*press_tile_);
        changeSelection(only);
        anchor_ = press_tile_;
    }
    press_on_selected_ = false;
    press_tile_.reset();
}

void FloorplanView::startDrag() {
    press_on_selected_ = false;
    press_tile_.reset();
    if (scene_.selection.empty()) return;
    auto* drag = new QDrag(this);
    drag->setMimeData(make_tpc_mime(scene_.selection));
    drag->exec(Qt::MoveAction);
    drop_message_.clear();
    scene_.highlighted_legend.reset();
    update();
}

void FloorplanView::moveFocus(Direction direction, bool extend) {
    const std::optional<int> next = scene_.focus ? geometry_.neighbour(*scene_.focus, direction) : geometry_.first_tpc();
    if (!next) return;
    if (!anchor_) anchor_ = scene_.focus ? scene_.focus : next;
    scene_.focus = next;
    if (extend) changeSelection(scene_.selection | range_between(geometry_, *anchor_, *next));
    else anchor_ = next;
    update();
}

void FloorplanView::keyPressEvent(QKeyEvent* event) {
    const bool shift = event->modifiers() & Qt::ShiftModifier;
    switch (event->key()) {
    case Qt::Key_Left: moveFocus(Direction::left, shift); return;
    case Qt::Key_Right: moveFocus(Direction::right, shift); return;
    case Qt::Key_Up: moveFocus(Direction::up, shift); return;
    case Qt::Key_Down: moveFocus(Direction::down, shift); return;
    case Qt::Key_Space:
        if (scene_.focus) {
            TpcMask toggled = scene_.selection;
            toggled.set(*scene_.focus, !toggled.test(*scene_.focus));
            anchor_ = scene_.focus;
            changeSelection(toggled);
        }
        return;
    case Qt::Key_G:  // the focused TPC's whole GPC
        if (scene_.focus) {
            const Tpc* tpc = find_tpc(gpu_, *scene_.focus);
            if (tpc != nullptr && tpc->gpc) changeSelection(scene_.selection | gpc_tpcs(gpu_, *tpc->gpc));
        }
        return;
    case Qt::Key_Home:  // back to the first TPC, as in a list
        scene_.focus = geometry_.first_tpc();
        anchor_ = scene_.focus;
        update();
        return;
    case Qt::Key_Escape: changeSelection({}); return;
    case Qt::Key_Return:
    case Qt::Key_Enter: {
        const QRectF focus_rect = scene_.focus ? tileRectInWidget(*scene_.focus) : QRectF(rect());
        emit giveMenuRequested(mapToGlobal(focus_rect.center().toPoint()));
        return;
    }
    default: break;
    }
    // The zoom keys of image viewers (the window's View menu has the same as actions).
    if (event->matches(QKeySequence::ZoomIn) || (event->key() == Qt::Key_Equal && event->modifiers() & Qt::ControlModifier)) {
        zoomIn();
        return;
    }
    if (event->matches(QKeySequence::ZoomOut)) {
        zoomOut();
        return;
    }
    if (event->key() == Qt::Key_0 && event->modifiers() & Qt::ControlModifier) {
        zoomToFit();
        return;
    }
    if (event->matches(QKeySequence::SelectAll)) {
        changeSelection(real_tpcs(gpu_));
        return;
    }
    QWidget::keyPressEvent(event);
}

void FloorplanView::focusInEvent(QFocusEvent* event) {
    // Reached by keyboard (F6, Tab): the tile cursor shows at once, on the first TPC when it had none.
    if (!scene_.focus && scene_.gpu != nullptr) {
        scene_.focus = geometry_.first_tpc();
        anchor_ = scene_.focus;
    }
    update();
    QWidget::focusInEvent(event);
}

void FloorplanView::focusOutEvent(QFocusEvent* event) {
    update();  // the focus frame goes
    QWidget::focusOutEvent(event);
}

void FloorplanView::contextMenuEvent(QContextMenuEvent* event) {
    if (event->reason() == QContextMenuEvent::Mouse) {
        const auto tile = geometry_.tpc_at(toPicture(event->pos()));
        if (tile && !scene_.selection.test(*tile)) {
            TpcMask only;
            only.set(*tile);
            changeSelection(only);
        }
    }
    emit giveMenuRequested(event->globalPos());
}

bool FloorplanView::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip && scene_.gpu != nullptr) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QPointF point = toPicture(help->pos());
        std::optional<int> key = geometry_.tpc_at(point);
        if (!key)  // holes and TPCs without a known TPC number have tooltips too
            for (const FloorplanTile& tile : geometry_.tiles())
                if (!tile.selectable() && tile.rect.contains(point)) key = tile.tpc_key;
        if (key) QToolTip::showText(help->globalPos(), floorplan_tooltip(scene_, *key), this);
        else QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

}  // namespace gpupart::widgets
