#pragma once
// The copy-engine panel: the LCE -> PCE wiring graph of copy_engine_painter, scaled to fit, with a
// tooltip on every box and the hovered engine's edges raised so one can follow a wire by pointing. Of its
// two layouts (LCEs left of the PCEs, or above them) it shows the one that comes out larger in the pane: a
// wide bottom dock gets the rows, a tall pane the columns.
#include <QWidget>

#include "copy_engine_painter.hpp"
#include "model/gpu.hpp"

namespace gpupart::widgets {

class CopyEngineView : public QWidget {
    Q_OBJECT
public:
    explicit CopyEngineView(QWidget* parent = nullptr);
    void setGpu(const Gpu& gpu);

    // The box under a widget position, or nullptr; its tooltip is what the view shows there.
    const CopyEngineBox* boxAt(QPointF position) const;
    const CopyEngineLayout& pictureLayout() const { return layout_; }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    double pictureScale() const;  // of the layout shown, at the widget's size
    // The smallest scale the view is drawn at (its minimum size): labels as large as the app's font.
    static double legibleScale();

protected:
    void resizeEvent(QResizeEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRectF pictureTarget() const;
    QSizeF room() const;
    void choose_layout();
    CopyEngineLayout columns_;  // left to right
    CopyEngineLayout rows_;     // top to bottom
    CopyEngineLayout layout_;   // the one shown
    int hovered_ = -1;  // index into layout_.boxes
};

}  // namespace gpupart::widgets
