#include "smlp_panel.hpp"

#include <algorithm>

#include <QHeaderView>
#include <QLabel>
#include <QPixmap>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "display_text.hpp"
#include "platform/user_names.hpp"

namespace gpupart::widgets {
namespace {

const QColor kAlarm(0xc6, 0x28, 0x28);

QString qs(const std::string& text) { return QString::fromStdString(text); }

QString request_time(const SmlpRequest& r, std::uint64_t now) {
    const bool held = r.queue == GPUPART_SMLP_SQ;
    return QString("%1 %2").arg(held ? "held" : "waits", qs(smlp_duration_text(held ? r.satisfied_ns : r.issued_ns, now)));
}

}  // namespace

SmlpPanel::SmlpPanel(QWidget* parent) : QWidget(parent) {
    setObjectName("smlp-panel");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    tree_ = new QTreeWidget(this);
    tree_->setColumnCount(column_count);
    tree_->setHeaderLabels({"Component / queue", "Process", "TPCs", "Time", "Label", "Priority", "Note"});
    tree_->setUniformRowHeights(true);
    tree_->setAlternatingRowColors(true);
    tree_->setRootIsDecorated(true);
    tree_->header()->setSectionResizeMode(QHeaderView::Interactive);
    tree_->headerItem()->setToolTip(tpcs, tooltip_text("A component's TPCs (H, the grant granularity h, the FQ length M); a "
                                                       "holder's: the TPCs its request was granted (SQ)"));
    layout->addWidget(summary_);
    layout->addWidget(tree_);
    // Expansion is the user's: a component collapsed stays collapsed across refreshes.
    connect(tree_, &QTreeWidget::itemCollapsed, this, [this](QTreeWidgetItem* item) {
        collapsed_.push_back(item->data(0, Qt::UserRole).toString());
    });
    connect(tree_, &QTreeWidget::itemExpanded, this, [this](QTreeWidgetItem* item) {
        std::erase(collapsed_, item->data(0, Qt::UserRole).toString());
    });
    summary_->setText("No SMLP component read yet");
}

QString SmlpPanel::summary() const { return summary_->text(); }

std::vector<SmlpPanel::Row> SmlpPanel::rows_of(const std::vector<SmlpEntry>& entries, std::uint64_t now_ns,
                                                const std::map<int, KnownProcess>& known, const std::string& gpu_uuid) {
    std::vector<Row> rows;
    for (const SmlpEntry& entry : entries) {
        if (!entry.component) {
            Row problem;
            problem.key = qs(entry.path);
            problem.texts[what] = "unreadable";
            problem.texts[note] = plain_text(entry.problem);
            problem.alarm = true;
            rows.push_back(problem);
            continue;
        }
        const SmlpComponent& c = *entry.component;
        Row component;
        component.key = qs(c.path);
        component.texts[what] = plain_text(c.name);
        component.texts[process] = plain_text(user_name(c.owner));
        component.texts[tpcs] = QString("%1 (H %2, h %3, M %4)").arg(qs(c.tpcs.to_list())).arg(c.size).arg(c.granularity).arg(c.fq_length);
        const QString gpu = c.gpu.empty() ? QString("GPU not said") : c.gpu == gpu_uuid ? QString("this GPU") : qs(c.gpu);
        component.texts[note] = c.changing ? QString("being changed (a process is inside its lock, or died there: the next lock "
                                                     "repairs it) · %1").arg(gpu)
                                           : QString("free %1 · %2").arg(c.free.empty() ? QString("none") : qs(c.free.to_list()), gpu);
        component.dim = !c.gpu.empty() && c.gpu != gpu_uuid;
        rows.push_back(component);
        for (const auto* queue : {&c.sq, &c.fq, &c.pq})
            for (const SmlpRequest& r : *queue) {
                Row request;
                request.key = QString("%1#%2:%3:%4").arg(component.key).arg(r.record).arg(static_cast<int>(r.queue)).arg(r.ticket);
                request.parent = component.key;
                request.texts[what] = QString("%1 #%2").arg(qs(std::string(to_string(r.queue)))).arg(r.ticket);
                const auto it = known.find(r.pid);
                request.texts[process] = it != known.end() ? it->second.name : QString::number(r.pid);
                if (it != known.end()) request.swatch = it->second.color;
                request.texts[priority] = QString::number(r.priority);
                request.texts[tpcs] = r.queue == GPUPART_SMLP_SQ ? qs(r.granted.to_list()) : QString();
                request.texts[time] = request_time(r, now_ns);
                request.texts[label] = plain_text(r.label);
                const bool dead = r.liveness != Liveness::alive;
                request.texts[note] = dead ? QString("exited: its TPCs return at the next change") : qs(inheritance_text(r));
                request.alarm = dead || r.inheritance == GPUPART_SMLP_INHERIT_REFUSED;
                rows.push_back(request);
            }
    }
    return rows;
}

void SmlpPanel::fill(QTreeWidgetItem* item, const Row& row) {
    for (int column = 0; column < column_count; ++column) {
        item->setText(column, row.texts[column]);
        item->setToolTip(column, row.texts[column].isEmpty() ? QString() : tooltip_text(row.texts[column]));
        item->setForeground(column, row.alarm && (column == note || column == what) ? QBrush(kAlarm)
                                    : row.dim                                      ? QBrush(Qt::gray)
                                                                                   : QBrush());
    }
    if (row.swatch.isValid()) {
        QPixmap swatch(12, 12);
        swatch.fill(row.swatch);
        item->setIcon(process, QIcon(swatch));
    } else {
        item->setIcon(process, QIcon());
    }
    QFont font = item->font(what);
    font.setBold(row.parent.isEmpty());
    item->setFont(what, font);
}

void SmlpPanel::rebuild(const std::vector<Row>& rows) {
    const QTreeWidgetItem* current = tree_->currentItem();
    const QString selected = current != nullptr ? current->data(0, Qt::UserRole).toString() : QString();
    tree_->clear();
    items_.clear();
    keys_.clear();
    for (const Row& row : rows) {
        QTreeWidgetItem* parent = row.parent.isEmpty() ? nullptr : items_.at(row.parent);
        auto* item = parent != nullptr ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(tree_);
        item->setData(0, Qt::UserRole, row.key);
        fill(item, row);
        items_[row.key] = item;
        keys_.push_back(row.key);
    }
    for (const auto& [key, item] : items_)
        if (item->parent() == nullptr && item->childCount() > 0)
            item->setExpanded(std::find(collapsed_.begin(), collapsed_.end(), key) == collapsed_.end());
    if (const auto it = items_.find(selected); it != items_.end()) tree_->setCurrentItem(it->second);
}

void SmlpPanel::setComponents(const SystemState& state, const std::map<int, KnownProcess>& known) {
    const std::vector<SmlpEntry>& entries = state.smlp;
    const std::vector<Row> rows = rows_of(entries, state.smlp_read_ns, known, state.gpu_uuid);
    std::vector<QString> keys;
    for (const Row& row : rows) keys.push_back(row.key);
    if (keys == keys_) {
        for (const Row& row : rows) fill(items_.at(row.key), row);  // in place: times and free TPCs move, nothing else
    } else {
        const bool first = keys_.empty();
        rebuild(rows);
        if (first)
            for (int column = 0; column < column_count; ++column) tree_->resizeColumnToContents(column);
    }
    int components = 0, holders = 0, waiting = 0;
    for (const SmlpEntry& entry : entries)
        if (entry.component) {
            ++components;
            holders += static_cast<int>(entry.component->sq.size());
            waiting += static_cast<int>(entry.component->fq.size() + entry.component->pq.size());
        }
    QString text = components == 0 ? QString("No SMLP component: programs make them with gpupart_smlp_open (docs/api.md)")
                                    : QString("%1 component%2 · %3 holding TPCs · %4 waiting · gpupart smlp lists the same")
                                          .arg(components)
                                          .arg(components == 1 ? "" : "s")
                                          .arg(holders)
                                          .arg(waiting);
    if (!state.smlp_problem.empty()) text = plain_text(state.smlp_problem) + " · " + text;
    summary_->setText(text);
}

}  // namespace gpupart::widgets
