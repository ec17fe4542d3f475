#include "floorplan_viewport.hpp"

#include <algorithm>

namespace gpupart::widgets {

double FloorplanViewport::fitScale() const {
    if (picture_.isEmpty() || area_.isEmpty()) return 1;
    const double fit = std::min(area_.width() / picture_.width(), area_.height() / picture_.height());
    return std::clamp(fit, kMinScale, kMaxFitScale);
}

void FloorplanViewport::fit() {
    zoom_.reset();
    scroll_ = {};
}

void FloorplanViewport::zoomTo(double scale, QPointF anchor) {
    const QPointF picture_point = (anchor - offset()) / this->scale();
    zoom_ = std::clamp(scale, kMinScale, kMaxScale);
    // Scroll so that picture_point lands under the anchor again where the picture is larger than the area
    // (offset = area's corner - scroll there); where it is smaller it is centred and the scroll clamps to 0.
    scroll_ = area_.topLeft() + picture_point * *zoom_ - anchor;
    clamp_scroll();
}

QSizeF FloorplanViewport::scrollRange() const {
    const QSizeF scaled = scaledSize();
    return {std::max(0.0, scaled.width() - area_.width()), std::max(0.0, scaled.height() - area_.height())};
}

QPointF FloorplanViewport::offset() const {
    // Centred along a direction where the picture is smaller than the area, scrolled along one where it is larger.
    const QSizeF scaled = scaledSize();
    const double x = scaled.width() <= area_.width() ? (area_.width() - scaled.width()) / 2 : -scroll_.x();
    const double y = scaled.height() <= area_.height() ? (area_.height() - scaled.height()) / 2 : -scroll_.y();
    return area_.topLeft() + QPointF(x, y);
}

void FloorplanViewport::clamp_scroll() {
    const QSizeF range = scrollRange();
    scroll_ = {std::clamp(scroll_.x(), 0.0, range.width()), std::clamp(scroll_.y(), 0.0, range.height())};
}

}  // namespace gpupart::widgets
