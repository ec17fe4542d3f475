#pragma once
// Where the floorplan picture sits in its view: scaled to fit the area (the default, following every resize
// of the window or the dock beside it) or at a zoom the user chose, centred while smaller than the area and
// scrolled while larger. Pure geometry, no widgets: FloorplanView keeps one, its scroll bars follow it, and
// the tests check it without a window.
#include <optional>

#include <QPointF>
#include <QRectF>
#include <QSizeF>

namespace gpupart::widgets {

class FloorplanViewport {
public:
    static constexpr double kMinScale = 0.25;
    static constexpr double kMaxScale = 6;
    static constexpr double kMaxFitScale = 4;  // past this a fit would only blow the text up
    static constexpr double kStep = 1.25;      // one zoom in/out step (Ctrl++, Ctrl+-, a Ctrl+wheel notch)

    void setPicture(QSizeF size) { picture_ = size; clamp_scroll(); }
    void setArea(QRectF area) { area_ = area; clamp_scroll(); }  // the view less its banner and scroll bars
    QRectF area() const { return area_; }
    QSizeF picture() const { return picture_; }

    bool fits() const { return !zoom_; }
    double fitScale() const;
    double scale() const { return zoom_ ? *zoom_ : fitScale(); }
    void fit();
    // Zooms to `scale` (clamped), keeping the picture point under `anchor` (view coordinates) where it is.
    void zoomTo(double scale, QPointF anchor);
    void zoomTo(double scale) { zoomTo(scale, area_.center()); }

    QSizeF scaledSize() const { return picture_ * scale(); }
    // How far the picture can scroll in each direction (0 where it fits) and where it is scrolled to.
    QSizeF scrollRange() const;
    QPointF scroll() const { return scroll_; }
    void setScroll(QPointF scroll) { scroll_ = scroll; clamp_scroll(); }
    QPointF offset() const;  // where the picture's origin is drawn, in view coordinates

private:
    void clamp_scroll();
    QSizeF picture_;
    QRectF area_;
    std::optional<double> zoom_;  // empty: fit
    QPointF scroll_;
};

}  // namespace gpupart::widgets
