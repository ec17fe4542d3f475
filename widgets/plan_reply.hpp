#pragma once
// What `gpupart plan --target ... --json` answers (docs/json-output.md, "gpupart plan"), read into plain
// values for the Plan dialog. The dialog shows the CLI's own answer instead of planning again itself, so
// the preview is exactly what --apply will do.
#include <optional>
#include <vector>

#include <QByteArray>
#include <QString>

namespace gpupart::widgets {

struct PlanReply {
    struct Process {
        int pid = 0;
        QString command;
        QString intensity;      // "compute" / "memory"
        QString target;         // the --target text, "1234=50%"
        double target_rate = 0; // what it asks, per second
        int partition = -1;     // processes with the same index share one; -1: none (infeasible)
        int tpcs = 0;
        QString mask;           // TPC list, empty when there is no partition
        double planned_rate = 0;
        double model_rate = 0;
        bool in_conflict = false;
        bool met = false;
    };
    struct Finding {
        QString severity;  // "error", "warning", "info"
        QString id;
        QString message;
        bool is_new = false;
    };
    struct Change {  // the controller's plan for one process's mask
        int pid = 0;
        quint64 start_time = 0;
        QString command;
        QString before_tpcs;
        QString after_tpcs;
        QString after_mask;  // 32 hex digits
    };

    QString gpu;
    int total_tpcs = 0;
    int planned_tpcs = 0;
    bool feasible = false;
    QString reason;               // why not, when infeasible
    double closest_fraction = 0;  // the largest fraction of every target that fits
    int spare_tpcs = 0;
    std::vector<Process> processes;
    // The change, when feasible.
    bool has_change = false;
    QString action;
    bool refused = false;
    std::vector<Change> changes;
    std::vector<Finding> findings;
    bool applied = false;
    std::optional<qint64> journal_id;
};

// Parses the CLI's answer; nullopt (and `problem` set) when it is not the plan JSON at all.
std::optional<PlanReply> parse_plan_reply(const QByteArray& json, QString* problem = nullptr);

// One line for the dialog: every target met (and the spare TPCs), or why not and what fraction would fit.
QString plan_verdict(const PlanReply& reply);

}  // namespace gpupart::widgets
