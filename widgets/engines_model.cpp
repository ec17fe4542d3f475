#include "engines_model.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include <QColor>
#include <QFont>
#include <QStringList>

#include "fact_qtext.hpp"

namespace gpupart::widgets {

// One row of the tree. Rows own their children; `row` is the position under the parent, kept so
// parent() is O(1).
struct EnginesModel::Node {
    RowKind kind = RowKind::note;
    std::array<QString, ColumnCount> text;
    std::array<QString, ColumnCount> tip;
    Node* parent = nullptr;
    int row = 0;
    std::vector<std::unique_ptr<Node>> children;

    Node* add(RowKind child_kind) {
        auto child = std::make_unique<Node>();
        child->kind = child_kind;
        child->parent = this;
        child->row = static_cast<int>(children.size());
        children.push_back(std::move(child));
        return children.back().get();
    }
};

namespace {

using Node = EnginesModel::Node;
using RowKind = EnginesModel::RowKind;

QString qs(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())); }

QString kind_text(EngineKind kind) { return qs(to_string(kind)).replace(QLatin1Char('_'), QLatin1Char(' ')); }

// Copy engine n is LCE n; LCE0/1 are usually graphics copy engines (GRCE), which matters because they
// may share physical engines with another LCE (Bakita & Anderson, RTAS 2024, rule R8).
const LogicalCopyEngine* lce_of(const Gpu& gpu, const Engine& engine) {
    if (engine.kind != EngineKind::copy) return nullptr;
    for (const LogicalCopyEngine& lce : gpu.copy_engines.lces)
        if (lce.index == engine.instance) return &lce;
    return nullptr;
}

void fill_engine(Node& row, const Gpu& gpu, const Engine& engine) {
    const LogicalCopyEngine* lce = lce_of(gpu, engine);
    const bool grce = lce != nullptr && lce->grce;
    row.text = {qs(engine.name) + (grce ? QStringLiteral(" (GRCE)") : QString()),
                kind_text(engine.kind) + (grce ? QStringLiteral(" · GRCE") : QString()), fact_text(engine.runlist),
                provenance_text(engine.from)};
    QString name_tip = QStringLiteral("%1: %2 engine, instance %3").arg(qs(engine.name), kind_text(engine.kind)).arg(engine.instance);
    if (lce != nullptr)
        name_tip += QStringLiteral("\nlogical copy engine LCE%1%2").arg(lce->index).arg(grce ? QStringLiteral(", graphics copy engine (GRCE)") : QString());
    const QString runlist_tip = engine.runlist.known()
                                    ? QStringLiteral("runlist %1 (one runlist per engine: Bakita & Anderson, RTAS 2024, rule R7)").arg(*engine.runlist.value)
                                    : QStringLiteral("runlist unknown: %1").arg(fact_text(engine.runlist));
    const QString sources = QStringLiteral("engine: %1\nrunlist: %2").arg(provenance_text(engine.from), provenance_text(engine.runlist.from));
    row.tip = {name_tip + QLatin1Char('\n') + runlist_tip + QLatin1Char('\n') + sources, name_tip,
               runlist_tip + QStringLiteral("\nsource: ") + provenance_text(engine.runlist.from), sources};
}

void fill_all(Node& row, const QString& tip) { row.tip.fill(tip); }

// What a runlist's scheduler holds: its TSGs and their channels when a source read them, the bare
// channel ids or TSG count when only those were readable, else one row saying why not.
void add_schedule(Node& runlist_row, const Runlist& runlist) {
    const QString id = QString::number(runlist.id);
    for (const Tsg& tsg : runlist.tsgs) {
        Node* tsg_row = runlist_row.add(RowKind::tsg);
        const QString pid = tsg.pid ? QStringLiteral(" · pid %1").arg(*tsg.pid) : QString();
        tsg_row->text = {QStringLiteral("TSG %1%2").arg(tsg.id).arg(pid), QStringLiteral("TSG"), id, provenance_text(tsg.from)};
        fill_all(*tsg_row, QStringLiteral("time-slice group %1 on runlist %2%3: its %4 channels are scheduled together\nsource: %5")
                               .arg(tsg.id).arg(runlist.id).arg(pid).arg(tsg.channels.size()).arg(provenance_text(tsg.from)));
        for (const Channel& channel : tsg.channels) {
            Node* channel_row = tsg_row->add(RowKind::channel);
            const QString channel_pid = channel.pid ? QStringLiteral(" · pid %1").arg(*channel.pid) : QString();
            channel_row->text = {QStringLiteral("channel %1%2").arg(channel.id).arg(channel_pid), QStringLiteral("channel"), id,
                                 provenance_text(channel.from)};
            fill_all(*channel_row, QStringLiteral("channel %1 of TSG %2%3\nsource: %4")
                                       .arg(channel.id).arg(tsg.id).arg(channel_pid, provenance_text(channel.from)));
        }
    }
    if (!runlist.tsgs.empty()) return;
    if (!runlist.channel_ids.empty()) {
        QStringList ids;
        for (const int channel : runlist.channel_ids) ids << QString::number(channel);
        Node* row = runlist_row.add(RowKind::channels);
        row->text = {QStringLiteral("channels %1").arg(ids.join(QStringLiteral(", "))), QStringLiteral("channels"), id,
                     provenance_text(runlist.from)};
        fill_all(*row, QStringLiteral("allocated channels of runlist %1 (their TSGs were not readable)\nsource: %2")
                           .arg(runlist.id).arg(provenance_text(runlist.from)));
    }
    Node* note = runlist_row.add(RowKind::note);
    if (runlist.tsg_count.known())
        note->text = {QStringLiteral("%1 TSGs in use").arg(*runlist.tsg_count.value), QStringLiteral("TSGs"), id,
                      provenance_text(runlist.tsg_count.from)};
    else
        note->text = {QStringLiteral("TSGs and channels: %1").arg(fact_text(runlist.tsg_count)), QStringLiteral("TSGs"), id,
                      provenance_text(runlist.tsg_count.from)};
    fill_all(*note, note->text[EnginesModel::NameColumn] + QStringLiteral("\nsource: ") + provenance_text(runlist.tsg_count.from));
}

std::unique_ptr<Node> build_tree(const Gpu& gpu) {
    auto root = std::make_unique<Node>();
    if (gpu.engines.empty() && gpu.runlists.empty()) {
        Node* note = root->add(RowKind::note);
        note->text = {QStringLiteral("No engine table for this GPU: no source gave one"), {}, {}, {}};
        fill_all(*note, note->text[0]);
        return root;
    }
    // Runlists by id, whether a source listed the runlist itself or only an engine's runlist fact.
    std::map<int, const Runlist*> runlists;
    for (const Runlist& runlist : gpu.runlists) runlists[runlist.id] = &runlist;
    std::map<int, std::vector<const Engine*>> engines_on;
    std::vector<std::pair<std::string, std::vector<const Engine*>>> unknown;  // reason -> engines, first seen first
    for (const Engine& engine : gpu.engines) {
        if (engine.runlist.known()) {
            engines_on[*engine.runlist.value].push_back(&engine);
            runlists.emplace(*engine.runlist.value, nullptr);
            continue;
        }
        auto group = std::find_if(unknown.begin(), unknown.end(), [&](const auto& g) { return g.first == engine.runlist.unknown_reason; });
        if (group == unknown.end()) group = unknown.insert(unknown.end(), {engine.runlist.unknown_reason, {}});
        group->second.push_back(&engine);
    }
    for (const auto& [id, runlist] : runlists) {
        Node* row = root->add(RowKind::runlist);
        const auto& engines = engines_on[id];
        QStringList names;
        for (const Engine* engine : engines) names << qs(engine->name);
        const Provenance from = runlist != nullptr ? runlist->from : engines.front()->runlist.from;
        row->text = {QStringLiteral("runlist %1").arg(id), QStringLiteral("runlist"), QString::number(id), provenance_text(from)};
        fill_all(*row, QStringLiteral("runlist %1 serves %2 (a runlist may serve several engines: Bakita & Anderson, RTAS 2024, rule R6)\nsource: %3")
                           .arg(id).arg(names.isEmpty() ? QStringLiteral("no engine a source named") : names.join(QStringLiteral(", ")),
                                        provenance_text(from)));
        for (const Engine* engine : engines) fill_engine(*row->add(RowKind::engine), gpu, *engine);
        if (runlist != nullptr) add_schedule(*row, *runlist);
    }
    for (const auto& [reason, engines] : unknown) {
        Node* group = root->add(RowKind::unknown_runlist);
        const QString why = reason.empty() ? QStringLiteral("unknown") : QString::fromStdString(reason);
        group->text = {QStringLiteral("runlist: %1").arg(why), QStringLiteral("%1 engines").arg(engines.size()), why,
                       provenance_text(engines.front()->runlist.from)};
        fill_all(*group, QStringLiteral("No source could tell the runlist of these engines: %1\nasked: %2")
                             .arg(why, provenance_text(engines.front()->runlist.from)));
        for (const Engine* engine : engines) fill_engine(*group->add(RowKind::engine), gpu, *engine);
    }
    return root;
}

}  // namespace

EnginesModel::EnginesModel(QObject* parent) : QAbstractItemModel(parent), root_(std::make_unique<Node>()) {}
EnginesModel::~EnginesModel() = default;

void EnginesModel::setGpu(const Gpu& gpu) {
    beginResetModel();
    root_ = build_tree(gpu);
    endResetModel();
}

const EnginesModel::Node* EnginesModel::node_of(const QModelIndex& index) const {
    return index.isValid() ? static_cast<const Node*>(index.internalPointer()) : root_.get();
}

QModelIndex EnginesModel::index(int row, int column, const QModelIndex& parent) const {
    if (!hasIndex(row, column, parent)) return {};
    const Node* node = node_of(parent);
    return createIndex(row, column, node->children[static_cast<std::size_t>(row)].get());
}

QModelIndex EnginesModel::parent(const QModelIndex& child) const {
    if (!child.isValid()) return {};
    const Node* parent_node = node_of(child)->parent;
    if (parent_node == nullptr || parent_node == root_.get()) return {};
    return createIndex(parent_node->row, 0, const_cast<Node*>(parent_node));
}

int EnginesModel::rowCount(const QModelIndex& parent) const {
    if (parent.column() > 0) return 0;  // only the first column has children, as views expect
    return static_cast<int>(node_of(parent)->children.size());
}

int EnginesModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant EnginesModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) return {};
    const Node* node = node_of(index);
    const auto column = static_cast<std::size_t>(index.column());
    switch (role) {
    case Qt::DisplayRole: return node->text[column];
    case Qt::ToolTipRole: return node->tip[column];
    case RowKindRole: return static_cast<int>(node->kind);
    case Qt::FontRole: {
        // Runlists and the "runlist unknown" groups are headings; notes about what is unknown are
        // italic so they do not read as data.
        if ((node->kind == RowKind::runlist || node->kind == RowKind::unknown_runlist) && index.column() != SourceColumn) {
            QFont font;
            font.setBold(true);
            return font;
        }
        if (node->kind == RowKind::note) {
            QFont font;
            font.setItalic(true);
            return font;
        }
        return {};
    }
    case Qt::ForegroundRole:
        // What no source could tell, and where facts came from, in grey: present, but quieter than the data.
        if (node->kind == RowKind::note || (node->kind == RowKind::unknown_runlist && index.column() == RunlistColumn) ||
            index.column() == SourceColumn)
            return QColor(0x6b, 0x6b, 0x6b);
        if (node->kind == RowKind::engine && index.column() == RunlistColumn && !node->text[RunlistColumn].isEmpty() &&
            node->parent->kind == RowKind::unknown_runlist)
            return QColor(0x6b, 0x6b, 0x6b);  // the reason repeats its group's heading: quiet
        return {};
    default: return {};
    }
}

QVariant EnginesModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case NameColumn: return QStringLiteral("Name");
    case KindColumn: return QStringLiteral("Kind");
    case RunlistColumn: return QStringLiteral("Runlist");
    case SourceColumn: return QStringLiteral("Source");
    default: return {};
    }
}

}  // namespace gpupart::widgets
