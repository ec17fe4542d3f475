#pragma once
// Processes that were shown and are gone: one line for the status bar, so a row never vanishes unannounced
// ("process 4101 (python3 train.py) exited"). A process still running that left the registry is said so.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <QString>

#include "process_rows.hpp"

namespace gpupart::gui {

class ExitNotice {
public:
    // The rows of this refresh; returns the line about those of the last refresh that are gone (empty: none).
    QString update(const std::vector<widgets::ProcessRow>& rows);

private:
    std::map<std::pair<int, std::uint64_t>, QString> shown_;  // pid and start time -> command (escaped)
};

}  // namespace gpupart::gui
