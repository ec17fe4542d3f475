#pragma once
// The engines panel: one line saying how much of the engine table is known, over the EnginesModel
// tree (runlists -> engines -> TSGs -> channels), every fact with its source.
#include <QWidget>

#include "model/gpu.hpp"

class QLabel;
class QTreeView;

namespace gpupart::widgets {

class EnginesModel;

class EnginesView : public QWidget {
    Q_OBJECT
public:
    explicit EnginesView(QWidget* parent = nullptr);
    void setGpu(const Gpu& gpu);

    EnginesModel* model() const { return model_; }
    QTreeView* tree() const { return tree_; }

private:
    EnginesModel* model_;
    QTreeView* tree_;
    QLabel* summary_;
};

// "23 engines · 6 on 4 runlists · 17 with runlist unknown: not recorded (...)": the view's headline.
QString engines_summary(const Gpu& gpu);

}  // namespace gpupart::widgets
