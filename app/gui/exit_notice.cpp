#include "exit_notice.hpp"

#include <fstream>
#include <string>

#include <QStringList>

#include "platform/process_identity.hpp"

namespace gpupart::gui {
namespace {

// Gone from the system (no such process, its pid now another's, or a zombie not yet reaped: the demo's
// workers are the app's children), or only from the registry (the shim unregistered, the slot was removed).
bool has_exited(int pid, std::uint64_t start_time) {
    if (process_liveness(pid, start_time) != Liveness::alive) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const std::size_t name_end = line.rfind(')');  // the name may hold spaces and ')'
    return name_end == std::string::npos || name_end + 2 >= line.size() || line[name_end + 2] == 'Z' || line[name_end + 2] == 'X';
}

}  // namespace

QString ExitNotice::update(const std::vector<widgets::ProcessRow>& rows) {
    std::map<std::pair<int, std::uint64_t>, QString> now;
    for (const widgets::ProcessRow& row : rows) now[{row.pid, row.start_time}] = row.command;
    QStringList exited;
    QStringList left;
    for (const auto& [key, command] : shown_)
        if (!now.contains(key)) (has_exited(key.first, key.second) ? exited : left) << QString("%1 (%2)").arg(key.first).arg(command.left(60));
    shown_ = std::move(now);
    QStringList parts;
    if (!exited.isEmpty())
        parts << QString("%1 %2 exited").arg(QString(exited.size() == 1 ? "Process" : "Processes"), exited.join(", "));
    if (!left.isEmpty())
        parts << QString("%1 %2 left the registry (still running)").arg(QString(left.size() == 1 ? "Process" : "Processes"), left.join(", "));
    return parts.join("; ");
}

}  // namespace gpupart::gui
