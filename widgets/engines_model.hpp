#pragma once
// The engines of one GPU as a tree: runlist -> the engines it serves, then its time-slice groups (TSGs)
// -> their channels, where a source could read them. Engines whose runlist no source could tell sit
// under one node per reason ("runlist: needs root"), so the tree never pretends to know a runlist.
// Every row says where its fact came from (the "source" column and the tooltips).
#include <memory>
#include <vector>

#include <QAbstractItemModel>
#include <QString>

#include "model/gpu.hpp"

namespace gpupart::widgets {

class EnginesModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { NameColumn, KindColumn, RunlistColumn, SourceColumn, ColumnCount };
    // What a row stands for, for views and tests that need more than the text.
    enum class RowKind { runlist, unknown_runlist, engine, tsg, channel, channels, note };
    static constexpr int RowKindRole = Qt::UserRole + 1;

    explicit EnginesModel(QObject* parent = nullptr);
    ~EnginesModel() override;

    // Rebuilds the tree (a model reset): the topology of a GPU changes only when another GPU or
    // snapshot is chosen, so there is nothing to gain from finer-grained updates.
    void setGpu(const Gpu& gpu);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    struct Node;  // defined in the .cpp

private:
    const Node* node_of(const QModelIndex& index) const;
    std::unique_ptr<Node> root_;
};

}  // namespace gpupart::widgets
