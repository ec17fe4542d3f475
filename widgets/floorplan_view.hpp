#pragma once
// The interactive floorplan: select TPCs (click, shift/ctrl-click, rubber band, a GPC's header, or the
// keyboard), drag them onto a process (a legend entry here, or a row of the process table) or onto
// "free". While a drag hovers a target the controller's verdict shows inline; an error refuses the drop.
// It changes nothing itself: drops go to the DropAction the main window sets.
// The picture fits the view by default and follows its size; zoom in/out (Ctrl++, Ctrl+-, Ctrl+wheel at the
// pointer) leaves fitting, with scroll bars once it is larger than the view; Ctrl+0 fits again.
#include <optional>

#include <QPoint>
#include <QRubberBand>
#include <QWidget>

class QScrollBar;

#include "floorplan_geometry.hpp"
#include "floorplan_scene.hpp"
#include "floorplan_viewport.hpp"
#include "tpc_drag.hpp"

namespace gpupart::widgets {

class FloorplanView : public QWidget {
    Q_OBJECT
public:
    static constexpr int kBannerHeight = 26;  // the line above the picture: what a drop would do, the zoom
    explicit FloorplanView(QWidget* parent = nullptr);

    void setGpu(const Gpu& gpu, const QString& title);
    void setOwners(std::vector<FloorplanOwner> owners);  // keeps selection and focus
    void setGrants(std::vector<FloorplanGrant> grants);  // SMLP holders' TPCs (a band on their tiles)
    const FloorplanScene& scene() const { return scene_; }
    const FloorplanGeometry& geometry() const { return geometry_; }

    TpcMask selection() const { return scene_.selection; }
    void setSelection(const TpcMask& tpcs);
    std::optional<int> focusTpc() const { return scene_.focus; }  // the TPC number with the keyboard focus

    void setDropJudge(DropJudge judge) { judge_ = std::move(judge); }
    void setDropAction(DropAction action) { action_ = std::move(action); }

    // Zoom: fitted (the default) or chosen; zoomIn/zoomOut step from the current scale around the view's centre.
    const FloorplanViewport& viewport() const { return viewport_; }
    double zoom() const { return viewport_.scale(); }
    bool fitsView() const { return viewport_.fits(); }
    void zoomIn();
    void zoomOut();
    void zoomToFit();

    // Picture <-> widget coordinates at the current zoom and scroll position.
    QPointF toPicture(QPointF widget_point) const;
    QRectF tileRectInWidget(int tpc_key) const;
    QRectF legendRectInWidget(int index) const;
    QRectF headerRectInWidget(std::optional<int> gpc) const;
    QString dropMessage() const { return drop_message_; }
    // The banner's text while nothing is selected, instead of how to select (a read-only picture says what it shows).
    void setIdleHint(const QString& hint) { idle_hint_ = hint; update(); }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void selectionChanged();
    void giveMenuRequested(QPoint global_position);  // context menu / Menu key: "give selection to…"
    void zoomChanged();

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void focusInEvent(QFocusEvent* event) override;
    void focusOutEvent(QFocusEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    bool event(QEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dragLeaveEvent(QDragLeaveEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    double scale() const { return viewport_.scale(); }
    QPointF offset() const { return viewport_.offset(); }
    void zoomAround(double scale, QPointF anchor);
    void layoutViewport();  // area and scroll bars after a resize, a zoom or a new picture
    std::optional<DropTarget> legendTargetAt(QPointF widget_point, int* entry = nullptr) const;
    void changeSelection(const TpcMask& tpcs);
    void moveFocus(Direction direction, bool extend);
    void startDrag();

    Gpu gpu_;
    FloorplanScene scene_;
    FloorplanGeometry geometry_;
    FloorplanViewport viewport_;
    QScrollBar* horizontal_ = nullptr;
    QScrollBar* vertical_ = nullptr;
    DropJudge judge_;
    DropAction action_;
    QString drop_message_;
    QString idle_hint_;
    bool drop_allowed_ = false;
    bool drop_warning_ = false;

    // Mouse gesture state.
    QPoint press_position_;
    std::optional<int> press_tile_;
    bool press_on_selected_ = false;
    TpcMask selection_before_band_;
    QRubberBand* band_ = nullptr;
    std::optional<int> anchor_;  // shift-click / shift-arrow extends from here
};

}  // namespace gpupart::widgets
