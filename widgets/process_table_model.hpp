#pragma once
// The process table's model: one row per registered process (ProcessRow), sortable through a proxy by
// the numeric value of each column (SortRole), never by its text. Refreshes that keep the same
// processes update cells in place, so selection and scroll position survive 4 Hz refreshes.
#include <vector>

#include <QAbstractTableModel>

#include "process_rows.hpp"

namespace gpupart::widgets {

class ProcessTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { pid, user, command, gpu, tpcs, sms, share, launches, memory, gpu_util, cpu, rss, mps, shim, column_count };
    static constexpr int SortRole = Qt::UserRole + 1;
    static constexpr int PidRole = Qt::UserRole + 2;
    static constexpr int StartTimeRole = Qt::UserRole + 3;  // with the pid, names the process of the row
    static constexpr int LetterRole = Qt::UserRole + 4;     // its letter (floorplan tiles, `gpupart top`)

    using QAbstractTableModel::QAbstractTableModel;

    void setRows(std::vector<ProcessRow> rows);
    const std::vector<ProcessRow>& rows() const { return rows_; }
    const ProcessRow* rowForPid(int pid) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

private:
    static QVariant cell(const ProcessRow& row, int column, int role);  // what data() gives for a row
    std::vector<ProcessRow> rows_;
};

QString format_bytes(std::uint64_t bytes);  // "1.5 GiB"

}  // namespace gpupart::widgets
