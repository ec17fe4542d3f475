#include "plan_reply.hpp"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace gpupart::widgets {

std::optional<PlanReply> parse_plan_reply(const QByteArray& json, QString* problem) {
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    const QJsonObject root = document.object();
    if (error.error != QJsonParseError::NoError || !root.contains("feasible") || !root.value("processes").isArray()) {
        if (problem)
            *problem = error.error != QJsonParseError::NoError ? QString("gpupart plan gave no JSON: %1").arg(error.errorString())
                                                               : QString("gpupart plan's JSON has no plan in it");
        return std::nullopt;
    }
    PlanReply reply;
    reply.gpu = root.value("gpu").toString();
    reply.total_tpcs = root.value("total_tpcs").toInt();
    reply.planned_tpcs = root.value("planned_tpcs").toInt();
    reply.feasible = root.value("feasible").toBool();
    reply.reason = root.value("reason").toString();
    reply.closest_fraction = root.value("closest_fraction").toDouble();
    reply.spare_tpcs = root.value("spare_tpcs").toInt();
    for (const QJsonValue& value : root.value("processes").toArray()) {
        const QJsonObject p = value.toObject();
        reply.processes.push_back({p.value("pid").toInt(), p.value("command").toString(), p.value("class").toString(),
                                   p.value("target").toString(), p.value("target_rate").toDouble(),
                                   p.value("partition").toInt(-1), p.value("tpcs").toInt(), p.value("mask").toString(),
                                   p.value("planned_rate").toDouble(), p.value("model_rate").toDouble(),
                                   p.value("in_conflict").toBool(), p.value("met").toBool()});
    }
    if (const QJsonObject change = root.value("change").toObject(); !change.isEmpty()) {
        reply.has_change = true;
        reply.action = change.value("action").toString();
        reply.refused = change.value("refused").toBool();
        for (const QJsonValue& value : change.value("changes").toArray()) {
            const QJsonObject c = value.toObject();
            // start_time is a 64-bit tick count: QJsonValue holds it as a double, exact below 2^53.
            reply.changes.push_back({c.value("pid").toInt(), static_cast<quint64>(c.value("start_time").toDouble()),
                                     c.value("command").toString(), c.value("before_tpcs").toString(),
                                     c.value("after_tpcs").toString(), c.value("after_mask").toString()});
        }
        for (const QJsonValue& value : change.value("findings").toArray()) {
            const QJsonObject f = value.toObject();
            reply.findings.push_back({f.value("severity").toString(), f.value("id").toString(), f.value("message").toString(),
                                      f.value("new").toBool()});
        }
    }
    reply.applied = root.value("applied").toBool();
    if (root.value("journal_id").isDouble()) reply.journal_id = static_cast<qint64>(root.value("journal_id").toDouble());
    return reply;
}

QString plan_verdict(const PlanReply& reply) {
    if (!reply.feasible)
        return QString("The targets cannot all be met: %1. At most %2% of every target fits.")
            .arg(reply.reason)
            .arg(reply.closest_fraction * 100, 0, 'f', 1);
    QString text = QString("Every target is met on %1 of %2 TPCs; %3 TPC%4 left to no process.")
                       .arg(reply.planned_tpcs)
                       .arg(reply.total_tpcs)
                       .arg(reply.spare_tpcs)
                       .arg(reply.spare_tpcs == 1 ? "" : "s");
    if (reply.refused) text += " The controller refuses the change (see the findings).";
    if (reply.applied) text += QString(" Applied (history entry #%1).").arg(reply.journal_id.value_or(0));
    return text;
}

}  // namespace gpupart::widgets
