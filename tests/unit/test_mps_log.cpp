// The MPS log reader against the lines recorded on the H100 (driver 580, tests/fixtures/mps-log/,
// docs/mps-fault-domain.md), and against what a hostile or broken log may hold.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/mps_log.hpp"
#include "platform/safe_file.hpp"

using namespace gpupart;

namespace {

std::string fixture(const std::string& name) {
    return read_regular_file(fmt::format("{}/mps-log/{}", GPUPART_FIXTURES, name), 1 << 20, Links::refuse, "fixture");
}

// A scratch directory, removed with everything in it.
struct ScratchDir {
    std::string path;
    ScratchDir() {
        char name[] = "/tmp/gpupart-mpslog-XXXXXX";
        path = ::mkdtemp(name);
    }
    ~ScratchDir() { std::filesystem::remove_all(path); }
    void write(const std::string& name, const std::string& text) const { std::ofstream(fmt::format("{}/{}", path, name)) << text; }
};

}  // namespace

TEST(MpsLog, ParsesARecordedLine) {
    const auto line = parse_mps_log_line(
        "[2026-11-23 16:44:54.747 Server   486] Client {PID: 6279, Context: 1} encountered a fatal GPU error.");
    ASSERT_TRUE(line);
    EXPECT_EQ(line->time, "2026-11-23 16:44:54.747");
    EXPECT_EQ(line->source, "Server");
    EXPECT_EQ(line->pid, 486);
    EXPECT_EQ(line->message, "Client {PID: 6279, Context: 1} encountered a fatal GPU error.");
}

TEST(MpsLog, RefusesWhatIsNotALogLine) {
    EXPECT_FALSE(parse_mps_log_line(""));
    EXPECT_FALSE(parse_mps_log_line("486"));
    EXPECT_FALSE(parse_mps_log_line("[2026-11-23 16:44:54.747 Server] no pid"));
    EXPECT_FALSE(parse_mps_log_line("[2026-11-23 16:44:54.747 Server -3] negative pid"));
    EXPECT_FALSE(parse_mps_log_line("[2026-1x-23 16:44:54.747 Server 486] bad date"));
    EXPECT_FALSE(parse_mps_log_line("[2026-11-23 16:44:54.747 Server 486 no closing bracket"));
}

TEST(MpsLog, EscapesControlBytesFromTheLog) {
    const auto line = parse_mps_log_line("[2026-11-23 16:44:54.747 Server 486] \x1b]0;PWNED\a\x1b[2J\xc2\x9b" "1m");
    ASSERT_TRUE(line);
    EXPECT_EQ(line->message, "\\x1b]0;PWNED\\x07\\x1b[2J\\xc2\\x9b1m");
}

TEST(MpsLog, AFaultThatTookDownThreeClients) {
    const auto errors = find_mps_fatal_errors(fixture("control-start.log"), fixture("server-fault-three-clients.log"));
    ASSERT_EQ(errors.size(), 1u);
    const MpsFatalError& e = errors[0];
    EXPECT_EQ(e.time, "2026-11-23 16:44:54.747");
    EXPECT_EQ(e.server_pid, 486);
    // 6325 wrote out of bounds; the server names 6279 first, and tears down all three.
    EXPECT_EQ(e.reported_client, 6279);
    EXPECT_EQ(e.clients, (std::vector<int>{6278, 6279, 6325}));
    EXPECT_EQ(e.devices_reset, std::vector<int>{0});
    EXPECT_EQ(e.what, "Client {PID: 6279, Context: 1} encountered a fatal GPU error.");
}

TEST(MpsLog, AFaultOfALoneClient) {
    const auto errors = find_mps_fatal_errors(fixture("control-start.log"), fixture("server-fault-one-client.log"));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].time, "2026-11-23 16:43:43.700");
    EXPECT_EQ(errors[0].clients, std::vector<int>{27203});
    EXPECT_EQ(errors[0].devices_reset, std::vector<int>{0});
}

TEST(MpsLog, KilledClientsAreNoFatalError) {
    EXPECT_TRUE(find_mps_fatal_errors(fixture("control-start.log"), fixture("server-start-and-killed-clients.log")).empty());
}

TEST(MpsLog, ErrorsBeforeTheDaemonLastStartedAreHistory) {
    const std::string restarted = "[2026-11-23 17:00:00.000 Control  900] Starting control daemon using socket /tmp/x/control\n";
    EXPECT_TRUE(find_mps_fatal_errors(restarted, fixture("server-fault-three-clients.log")).empty());
    // With no start line in the control log's tail, every error in the server log's tail counts.
    EXPECT_EQ(find_mps_fatal_errors("", fixture("server-fault-three-clients.log")).size(), 1u);
}

TEST(MpsLog, OnlyTheRunningServersErrorsCount) {
    const auto errors = find_mps_fatal_errors("", fixture("server-fault-three-clients.log"));
    EXPECT_EQ(of_servers(errors, {486}).size(), 1u);
    EXPECT_TRUE(of_servers(errors, {487}).empty());
    EXPECT_TRUE(of_servers(errors, {}).empty());
}

TEST(MpsLog, ReadsBoundedTailsFromALineStart) {
    ScratchDir dir;
    dir.write("server.log", "[2026-11-23 16:00:00.000 Server 1] first line that is long\n"
                            "[2026-11-23 16:00:01.000 Server 1] second\n");
    const std::string tail = read_mps_log_tail(fmt::format("{}/server.log", dir.path), 50);
    EXPECT_EQ(tail, "[2026-11-23 16:00:01.000 Server 1] second\n");
    EXPECT_EQ(read_mps_log_tail(fmt::format("{}/missing.log", dir.path)), "");
}

TEST(MpsLog, RefusesAFifoInsteadOfBlocking) {
    ScratchDir dir;
    ASSERT_EQ(::mkfifo(fmt::format("{}/server.log", dir.path).c_str(), 0600), 0);
    EXPECT_THROW(read_mps_fatal_errors(dir.path), UserError);
}

TEST(MpsLog, ReadsBothLogsOfADirectory) {
    ScratchDir dir;
    dir.write("control.log", fixture("control-start.log"));
    dir.write("server.log", fmt::format("{}{}", fixture("server-start-and-killed-clients.log"), fixture("server-fault-three-clients.log")));
    const auto errors = read_mps_fatal_errors(dir.path);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].clients.size(), 3u);
}

TEST(MpsLog, ClientsRefusedWhileTheServerTearsDown) {
    const auto errors = find_mps_fatal_errors(fixture("control-start.log"), fixture("server-fault-refused-client.log"));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].time, "2026-11-23 16:55:08.085");
    EXPECT_EQ(errors[0].clients, std::vector<int>{19053});
    EXPECT_EQ(errors[0].refused, std::vector<int>{19068});
}

// gpupart-mps@.service runs the daemon with -f: no control.log or server.log of its own, its lines and its
// servers' on standard output, which the unit appends to control.log (recorded on the H100, driver 580:
// fixtures/mps-log/foreground-daemon.log). The server lines are found there when there is no server.log.
TEST(MpsLog, ADaemonRunWithForegroundWritesBothInControlLog) {
    const std::string recorded = fixture("foreground-daemon.log");
    const auto line = parse_mps_log_line(recorded.substr(0, recorded.find('\n')));
    ASSERT_TRUE(line);
    EXPECT_EQ(line->message.rfind("Starting control daemon", 0), 0u) << line->message;
    ScratchDir dir;
    dir.write("control.log", recorded);
    EXPECT_TRUE(read_mps_fatal_errors(dir.path).empty());
    dir.write("control.log", fmt::format("{}{}{}", fixture("control-start.log"), fixture("server-start-and-killed-clients.log"),
                                         fixture("server-fault-three-clients.log")));
    const auto errors = read_mps_fatal_errors(dir.path);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].clients.size(), 3u);
    // A server.log beside it is the -d layout: then control.log is read for the control daemon's lines only.
    dir.write("server.log", "");
    EXPECT_TRUE(read_mps_fatal_errors(dir.path).empty());
}
