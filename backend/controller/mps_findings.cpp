#include "controller/mps_findings.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/user_error.hpp"

namespace gpupart {

namespace {

constexpr const char* kFatalId = "mps-fatal-error";

std::string clients_text(const std::vector<int>& clients) {
    if (clients.empty()) return "its clients";
    return fmt::format("client{} {}", clients.size() == 1 ? "" : "s", fmt::join(clients, ", "));
}

}  // namespace

std::vector<Finding> mps_findings(const SystemState& state) {
    std::vector<Finding> findings;
    if (!state.mps_running) return findings;
    for (const MpsFatalError& error : state.mps_fatal_errors) {
        const std::string reset =
            error.devices_reset.empty() ? "" : fmt::format(", device {} reset", fmt::join(error.devices_reset, ", "));
        // The server names one client first; on the H100 that was never the one whose kernel faulted.
        const std::string named = error.reported_client > 0
                                      ? fmt::format("; the log names client {} first, which need not be the one at fault",
                                                    error.reported_client)
                                      : "";
        const std::string refused =
            error.refused.empty() ? ""
                                  : fmt::format("; it refused new client{} {} meanwhile", error.refused.size() == 1 ? "" : "s",
                                                fmt::join(error.refused, ", "));
        findings.push_back(Finding{
            Severity::error, "Bakita & Anderson, ECRTS 2025, pitfall 2",
            fmt::format("MPS server {} had a fatal GPU error at {} and tore down {}{}: their CUDA work failed{}{} "
                        "(MPS log in {})",
                        error.server_pid, error.time, clients_text(error.clients), reset, refused, named,
                        one_line(state.mps_log_directory)),
            kFatalId});
    }
    if (!state.mps_log_problem.empty())
        findings.push_back(Finding{Severity::info, "docs/mps-fault-domain.md",
                                   fmt::format("fatal MPS errors cannot be shown: {}", state.mps_log_problem),
                                   "mps-log-unreadable"});
    return findings;
}

bool belongs_in_plan(const Finding& finding) { return finding.id != kFatalId && finding.id != "mps-log-unreadable"; }

}  // namespace gpupart
