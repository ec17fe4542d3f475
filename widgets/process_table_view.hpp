#pragma once
// The process table as a drop target: TPCs dragged from the floorplan onto a row are given to that
// process. While the drag hovers a row the controller's verdict is shown (dropVerdict) and the row
// accepts the drop only when the verdict allows it. The row under the drag is highlighted (the selection
// colour with a frame where the drop is allowed, red where it is refused), so one sees who would get the TPCs.
#include <QTableView>

#include "tpc_drag.hpp"

namespace gpupart::widgets {

class ProcessTableView : public QTableView {
    Q_OBJECT
public:
    explicit ProcessTableView(QWidget* parent = nullptr);

    void setDropJudge(DropJudge judge) { judge_ = std::move(judge); }
    void setDropAction(DropAction action) { action_ = std::move(action); }
    std::optional<int> pidAt(QPoint viewport_position) const;  // through any proxy model
    // The row's process under `viewport_position` as a drop target: pid `pid` and the row's start time.
    DropTarget targetAt(QPoint viewport_position, int pid) const;
    std::optional<int> selectedPid() const;
    std::optional<int> dropTargetPid() const { return drop_pid_; }  // the row highlighted under a drag
    void selectPid(int pid);

signals:
    void dropVerdict(const QString& message, bool allowed, bool warning);  // empty message: drag left

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dragLeaveEvent(QDragLeaveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    void setDropTarget(std::optional<int> pid, bool allowed);
    DropJudge judge_;
    DropAction action_;
    std::optional<int> drop_pid_;
    bool drop_allowed_ = false;
};

}  // namespace gpupart::widgets
