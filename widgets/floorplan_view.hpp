#pragma once
// The interactive floorplan: select TPCs (click, shift/ctrl-click, rubber band, a GPC's header, or the
// keyboard), drag them onto a process (a legend entry here, or a row of the process table) or onto
// "free". While a drag hovers a target the controller's verdict shows inline; an error refuses the drop.
// It changes nothing itself: drops go to the DropAction the main window sets.
#include <optional>

#include <QPoint>
#include <QRubberBand>
#include <QWidget>

#include "floorplan_geometry.hpp"
#include "floorplan_scene.hpp"
#include "tpc_drag.hpp"

namespace gpupart::widgets {

class FloorplanView : public QWidget {
    Q_OBJECT
public:
    explicit FloorplanView(QWidget* parent = nullptr);

    void setGpu(const Gpu& gpu, const QString& title);
    void setOwners(std::vector<FloorplanOwner> owners);  // keeps selection and focus
    const FloorplanScene& scene() const { return scene_; }
    const FloorplanGeometry& geometry() const { return geometry_; }

    TpcMask selection() const { return scene_.selection; }
    void setSelection(const TpcMask& tpcs);
    std::optional<int> focusBit() const { return scene_.focus; }

    void setDropJudge(DropJudge judge) { judge_ = std::move(judge); }
    void setDropAction(DropAction action) { action_ = std::move(action); }

    // Picture <-> widget coordinates at the current zoom (the picture is scaled to fit the widget).
    QPointF toPicture(QPointF widget_point) const;
    QRectF tileRectInWidget(int mask_bit) const;
    QRectF legendRectInWidget(int index) const;
    QRectF headerRectInWidget(std::optional<int> gpc) const;
    QString dropMessage() const { return drop_message_; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void selectionChanged();
    void giveMenuRequested(QPoint global_position);  // context menu / Menu key: "give selection to…"

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    bool event(QEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dragLeaveEvent(QDragLeaveEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    double scale() const;
    QPointF offset() const;
    std::optional<DropTarget> legendTargetAt(QPointF widget_point, int* entry = nullptr) const;
    void changeSelection(const TpcMask& tpcs);
    void moveFocus(Direction direction, bool extend);
    void startDrag();

    Gpu gpu_;
    FloorplanScene scene_;
    FloorplanGeometry geometry_;
    DropJudge judge_;
    DropAction action_;
    QString drop_message_;
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
