// The controller's findings about a fatal MPS error (controller/mps_findings): what `check`, `top` and the
// GUI show, and that a plan is warned, not refused, for what MPS did before it.
#include <gtest/gtest.h>

#include <algorithm>

#include "controller/mps_findings.hpp"
#include "controller/rules.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;

namespace {

// The fault of tests/fixtures/mps-log/server-fault-three-clients.log, as the reader gives it.
MpsFatalError recorded_fault() {
    MpsFatalError e;
    e.time = "2026-11-23 16:44:54.747";
    e.server_pid = 486;
    e.clients = {6278, 6279, 6325};
    e.what = "Client {PID: 6279, Context: 1} encountered a fatal GPU error.";
    e.devices_reset = {0};
    e.reported_client = 6279;
    return e;
}

SystemState faulted_state(bool mps_running = true) {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    SystemState state;
    state.gpu = snapshot.gpus.at(0);
    state.mps_running = mps_running;
    state.mps_fatal_errors = {recorded_fault()};
    state.mps_log_directory = "/tmp/nvidia-mps-log";
    state.caller_uid = 1000;
    return state;
}

const Finding* find_id(const std::vector<Finding>& findings, const std::string& id) {
    const auto at = std::find_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; });
    return at == findings.end() ? nullptr : &*at;
}

}  // namespace

TEST(MpsFindings, AFatalErrorIsAnErrorNamingTimeServerAndClients) {
    const auto findings = check_result(faulted_state());
    const Finding* f = find_id(findings, "mps-fatal-error");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::error);
    EXPECT_EQ(f->message,
              "MPS server 486 had a fatal GPU error at 2026-11-23 16:44:54.747 and tore down clients 6278, 6279, 6325, "
              "device 0 reset: their CUDA work failed; the log names client 6279 first, which need not be the one at "
              "fault (MPS log in /tmp/nvidia-mps-log)");
    EXPECT_EQ(f->rule, "Bakita & Anderson, ECRTS 2025, pitfall 2");
}

TEST(MpsFindings, OneFindingPerFatalError) {
    auto state = faulted_state();
    state.mps_fatal_errors.push_back(recorded_fault());
    state.mps_fatal_errors.back().clients = {27203};
    const auto findings = mps_findings(state);
    ASSERT_EQ(findings.size(), 2u);
    EXPECT_NE(findings[1].message.find("tore down client 27203,"), std::string::npos) << findings[1].message;
}

TEST(MpsFindings, NothingWithoutMps) { EXPECT_TRUE(mps_findings(faulted_state(false)).empty()); }

TEST(MpsFindings, AnUnreadableLogIsSaidNotTakenForNoError) {
    auto state = faulted_state();
    state.mps_fatal_errors.clear();
    state.mps_log_problem = "/tmp/nvidia-mps-log/server.log: is a FIFO, not a regular file";
    const auto findings = mps_findings(state);
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(findings[0].id, "mps-log-unreadable");
    EXPECT_EQ(findings[0].message, "fatal MPS errors cannot be shown: /tmp/nvidia-mps-log/server.log: is a FIFO, not a regular file");
}

TEST(MpsFindings, APlanIsNotRefusedForWhatMpsDidBefore) {
    auto state = faulted_state();
    state.mps_log_problem = "unreadable";
    PlannedChange start;
    start.after = TpcMask::range(9, 16);
    const auto findings = check_plan(state, {start});
    EXPECT_EQ(find_id(findings, "mps-fatal-error"), nullptr);
    EXPECT_EQ(find_id(findings, "mps-log-unreadable"), nullptr);
    EXPECT_NE(find_id(check_result(state), "mps-fatal-error"), nullptr);
    EXPECT_TRUE(belongs_in_plan(Finding{Severity::error, "r", "m", "no-such-process"}));
}

TEST(MpsFindings, RefusedClientsAreNamed) {
    auto state = faulted_state();
    state.mps_fatal_errors[0].refused = {19068};
    const auto findings = mps_findings(state);
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_NE(findings[0].message.find("; it refused new client 19068 meanwhile;"), std::string::npos) << findings[0].message;
}
