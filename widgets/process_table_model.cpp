#include "process_table_model.hpp"

#include <algorithm>

#include <QBrush>
#include <QHash>
#include <QIcon>
#include <QPainter>
#include <QPixmap>

#include "display_text.hpp"
#include "owner_colors.hpp"

namespace gpupart::widgets {

QString format_bytes(std::uint64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    return unit == 0 ? QString("%1 B").arg(bytes) : QString("%1 %2").arg(value, 0, 'f', 1).arg(units[unit]);
}

namespace {

// The pid column's chip: the process's letter (as on its tiles and in `gpupart top`) on its colour, or on
// no colour with an outline when it is not partitioned (it owns no tile). Cached: a refresh asks for every row.
QString decoration_key(const ProcessRow& row) {
    return QString("%1%2%3").arg(row.letter).arg(row.partitioned ? row.color.rgb() : 0u).arg(row.partitioned);
}

QIcon letter_chip(const ProcessRow& row) {
    // Never destroyed: icons must not outlive the application in a static's destructor at exit.
    static auto& chips = *new QHash<QString, QIcon>;
    const QString key = decoration_key(row);
    if (const auto found = chips.constFind(key); found != chips.constEnd()) return *found;
    QPixmap pixmap(20, 16);
    pixmap.fill(Qt::transparent);
    {
        QPainter painter(&pixmap);
        if (row.partitioned) painter.fillRect(pixmap.rect(), row.color);
        else painter.drawRect(pixmap.rect().adjusted(0, 0, -1, -1));
        QFont font;
        font.setPixelSize(12);
        font.setBold(true);
        painter.setFont(font);
        painter.setPen(row.partitioned ? owner_text_color(row.color) : QColor(0x1a, 0x1a, 0x1a));
        painter.drawText(pixmap.rect(), Qt::AlignCenter, QString(row.letter));
    }
    return *chips.insert(key, QIcon(pixmap));
}

}  // namespace

void ProcessTableModel::setRows(std::vector<ProcessRow> rows) {
    const bool same_processes = rows.size() == rows_.size() &&
                                std::equal(rows.begin(), rows.end(), rows_.begin(), [](const ProcessRow& a, const ProcessRow& b) {
                                    return a.pid == b.pid && a.start_time == b.start_time;
                                });
    if (!same_processes) {
        beginResetModel();
        rows_ = std::move(rows);
        endResetModel();
        return;
    }
    // Only the cells whose text, colour or sort value changed are announced: the view repaints what it is
    // told changed, and at 4 Hz most cells (pid, user, command, TPCs...) stay the same.
    std::vector<std::pair<int, int>> changed(rows.size(), {column_count, -1});  // first and last column per row
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (int c = 0; c < column_count; ++c)
            for (const int role : {int(Qt::DisplayRole), int(Qt::DecorationRole), int(Qt::ForegroundRole), SortRole})
                if (role == Qt::DecorationRole ? c == pid && decoration_key(rows_[r]) != decoration_key(rows[r])
                                               : cell(rows_[r], c, role) != cell(rows[r], c, role)) {
                    changed[r] = {std::min(changed[r].first, c), c};
                    break;
                }
    rows_ = std::move(rows);
    for (std::size_t r = 0; r < changed.size(); ++r)
        if (changed[r].second >= 0)
            emit dataChanged(index(static_cast<int>(r), changed[r].first), index(static_cast<int>(r), changed[r].second));
}

const ProcessRow* ProcessTableModel::rowForPid(int pid_value) const {
    for (const ProcessRow& row : rows_)
        if (row.pid == pid_value) return &row;
    return nullptr;
}

int ProcessTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ProcessTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : column_count; }

Qt::ItemFlags ProcessTableModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDropEnabled;  // drop TPCs on a process
}

QVariant ProcessTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= column_count) return {};
    return cell(rows_[static_cast<std::size_t>(index.row())], index.column(), role);
}

QVariant ProcessTableModel::cell(const ProcessRow& row, int column_number, int role) {
    const auto column = static_cast<Column>(column_number);
    if (role == PidRole) return row.pid;
    if (role == StartTimeRole) return static_cast<qulonglong>(row.start_time);
    if (role == LetterRole) return QString(row.letter);
    if (role == Qt::DecorationRole && column == pid) return letter_chip(row);
    if (role == Qt::ForegroundRole && column == shim && row.shim_problem) return QBrush(QColor(0xc6, 0x28, 0x28));
    if (role == Qt::TextAlignmentRole) {
        const bool numeric = column == pid || column == gpu || column == tpcs || column == sms || column == share ||
                             column == launches || column == memory || column == gpu_util || column == cpu || column == rss;
        return QVariant::fromValue(Qt::AlignVCenter | (numeric ? Qt::AlignRight : Qt::AlignLeft));
    }
    if (role == Qt::ToolTipRole) {  // rich text, always: row.command may hold "<b>"
        switch (column) {
        // The process's tooltip (PID): who it is and both masks (the operator's, the program's own).
        case pid: return tooltip_text(QString("%1 · %2 · %3\n%4\n\n%5").arg(row.letter).arg(row.pid).arg(row.user, row.command, row.masks_detail));
        case command: return tooltip_text(row.command);
        case gpu: return tooltip_text(row.gpus_detail);
        case tpcs: return tooltip_text((row.partitioned ? "mask bits " + QString::fromStdString(row.tpcs.to_list())
                                                        : QString("not partitioned: may run on every TPC")) +
                                       (row.app_masks ? "\n\n" + row.masks_detail : QString()));
        case memory: return row.gpu_memory_bytes ? QVariant() : tooltip_text("no source reported this process's GPU memory (NVML)");
        case gpu_util: return row.gpu_percent ? QVariant()
                                              : tooltip_text("NVML gave no per-process sample: no NVML or a recording, or under MPS, "
                                                             "where NVML gives the GPU's time to the MPS server (Launches/s is each "
                                                             "client's own measure)");
        case cpu: return row.cpu_percent ? QVariant() : tooltip_text("shown from the second reading of /proc/PID/stat on (a second apart)");
        case rss: return row.rss_bytes ? QVariant() : tooltip_text("/proc/PID/statm could not be read (the process ended?)");
        case shim: return tooltip_text(row.shim_detail.isEmpty() ? row.shim : row.shim + "\n" + row.shim_detail);
        case mps: return tooltip_text("Without MPS the contexts of different processes time-slice the GPU, so TPC partitions only "
                                      "separate processes that share one MPS server.");
        default: return {};
        }
    }
    if (role == SortRole) {
        switch (column) {
        case pid: return row.pid;
        case gpu: return row.gpu;
        case tpcs: return row.tpc_count;
        case sms: return row.sm_count;
        case share: return row.share;
        case launches: return row.launches_per_second.value_or(-1);
        case memory: return row.gpu_memory_bytes ? static_cast<qulonglong>(*row.gpu_memory_bytes) : 0ULL;
        case gpu_util: return row.gpu_percent.value_or(-1);
        case cpu: return row.cpu_percent.value_or(-1);
        case rss: return row.rss_bytes ? static_cast<qulonglong>(*row.rss_bytes) : 0ULL;
        default: return cell(row, column_number, Qt::DisplayRole);
        }
    }
    if (role != Qt::DisplayRole) return {};
    switch (column) {
    case pid: return row.pid;
    case user: return row.user;
    case command: return row.command;
    case gpu: return row.other_gpus > 0 ? QString("%1 +%2").arg(row.gpu).arg(row.other_gpus) : QString::number(row.gpu);
    // "+app": the program chooses its own masks under these TPCs (the tooltip says which), as `gpupart list` marks it.
    case tpcs: return (row.partitioned ? QString::number(row.tpc_count) : QString("all %1").arg(row.tpc_count)) + (row.app_masks ? " +app" : "");
    case sms: return row.sm_count;
    case share: return QString("%1%").arg(row.share * 100, 0, 'f', 0);
    case launches: return row.launches_per_second ? QString::number(*row.launches_per_second, 'f', 0) : QString("–");
    case memory: return row.gpu_memory_bytes ? format_bytes(*row.gpu_memory_bytes) : QString("–");
    case gpu_util: return row.gpu_percent ? QString::number(*row.gpu_percent) : QString("–");
    case cpu: return row.cpu_percent ? QString::number(*row.cpu_percent, 'f', 1) : QString("–");
    case rss: return row.rss_bytes ? format_bytes(*row.rss_bytes) : QString("–");
    case mps: return row.mps;
    case shim: return row.shim;
    default: return {};
    }
}

QVariant ProcessTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= column_count) return {};
    static const char* const titles[] = {"PID", "User", "Command", "GPU", "TPCs", "SMs", "Share", "Launches/s",
                                         "GPU memory", "GPU%", "CPU%", "RSS", "MPS", "Shim"};
    static const char* const tips[] = {
        "Process id (a process is its pid and start time)", "Owner of the process", "Command line",
        "GPU index (+N: the process is on N other GPUs too)", "TPCs the process may use on this GPU", "SMs of those TPCs", "Share of the GPU's real TPCs",
        "Kernel launches per second, from the shim's counters", "GPU memory (NVML)",
        "Share of time a kernel of this process ran, NVML's latest per-process sample of the last 3 s (as nvtop's GPU%)",
        "CPU time over the last second, in % of one core (from /proc, as htop: 200% is two cores)",
        "Resident host memory (from /proc)", "MPS state",
        "What the shim in the process reports"};
    if (role == Qt::DisplayRole) return titles[section];
    if (role == Qt::ToolTipRole) return tips[section];
    return {};
}

}  // namespace gpupart::widgets
