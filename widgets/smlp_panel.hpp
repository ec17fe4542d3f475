#pragma once
// The SMLP dock: every SMLP component of the registry (libgpupart.so's locking protocol, smlp/smlp_file.hpp)
// as a tree, each component with its TPCs and free TPCs, and under it its requests in queue order (SQ: who
// holds which TPCs, then FQ, then PQ), refreshed with the window. Refreshes that keep the same requests
// change texts in place, so expansion, selection and scrolling survive the 4 Hz refresh.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <QColor>
#include <QWidget>

#include "controller/system_state.hpp"

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace gpupart::widgets {

// A process of the process table, as the SMLP dock names and colours a request of it.
struct KnownProcess {
    QString name;   // "1234 llm-serving"
    QColor color;   // its owner colour (floorplan, table)
};

class SmlpPanel : public QWidget {
    Q_OBJECT
public:
    enum Column { what, process, tpcs, time, label, priority, note, column_count };
    explicit SmlpPanel(QWidget* parent = nullptr);

    // `state`'s components (its GPU's, and the others marked so); `known`: the table's processes by pid.
    void setComponents(const SystemState& state, const std::map<int, KnownProcess>& known);

    QTreeWidget* tree() const { return tree_; }
    QString summary() const;  // the line above the tree

private:
    struct Row {
        QString key;         // stable across refreshes: component path, then queue, record and ticket
        QString parent;      // "" for a component or a problem
        QString texts[column_count];
        QColor swatch;       // the process column's decoration (invalid: none)
        bool alarm = false;  // red: a problem, a dead holder, inheritance refused
        bool dim = false;    // a component on another GPU
    };
    static std::vector<Row> rows_of(const std::vector<SmlpEntry>& entries, std::uint64_t now_ns,
                                    const std::map<int, KnownProcess>& known, const std::string& gpu_uuid);
    void rebuild(const std::vector<Row>& rows);
    static void fill(QTreeWidgetItem* item, const Row& row);

    QLabel* summary_ = nullptr;
    QTreeWidget* tree_ = nullptr;
    std::vector<QString> keys_;                  // of the rows shown, in order
    std::map<QString, QTreeWidgetItem*> items_;  // by key
    std::vector<QString> collapsed_;             // components the user collapsed
};

}  // namespace gpupart::widgets
