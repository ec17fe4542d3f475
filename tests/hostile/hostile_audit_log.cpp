// The audit trail: root changing another user's process is recorded in the system log, with
// who, what, which process and before/after; a change to one's own process is not. Read for real from a
// unix datagram socket this test binds (GPUPART_AUDIT_SOCKET, controller/audit_log.hpp), since CI has no
// /dev/log; the record is what syslog(3) would have sent there.
#include <gtest/gtest.h>

#include <filesystem>

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "hostile_demo_worker.hpp"
#include "hostile_support.hpp"

namespace gpupart::hostile {
namespace {

// The socket a system logger would listen on, bound in the scratch directory.
class LogSocket {
public:
    explicit LogSocket(const std::string& socket_path) : path(socket_path) {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
            throw std::runtime_error("cannot bind " + path);
    }
    ~LogSocket() { ::close(fd_); }
    LogSocket(const LogSocket&) = delete;
    LogSocket& operator=(const LogSocket&) = delete;

    // The next record, or "" when none comes within `timeout_ms`.
    std::string receive(int timeout_ms = 2000) {
        pollfd ready{fd_, POLLIN, 0};
        if (::poll(&ready, 1, timeout_ms) != 1) return "";
        char buffer[8192];
        const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
        return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
    }
    std::string path;

private:
    int fd_ = -1;
};

std::string wait_for_slot(const std::string& registry, pid_t pid) {
    for (int i = 0; i < 300; ++i) {
        std::error_code ignored;
        for (const auto& file : std::filesystem::recursive_directory_iterator(registry, ignored))
            if (file.path().filename().string().starts_with(std::to_string(pid) + "-")) return file.path();
        ::usleep(10000);
    }
    return "";
}

class HostileAuditLog : public ::testing::Test {
protected:
    void SetUp() override {
        if (!is_root()) GTEST_SKIP() << "needs root to make a test user and change its process";
        ASSERT_EQ(::mkdir(registry.c_str(), 0700), 0);
        ASSERT_EQ(::chmod(registry.c_str(), 01777), 0);
    }
    ScratchDir scratch;
    std::string registry = scratch / "registry";
    LogSocket log{scratch / "log.sock"};
    std::vector<std::string> env = {"GPUPART_REGISTRY_DIR=" + registry, "GPUPART_JOURNAL=" + (scratch / "journal.jsonl"),
                                    "GPUPART_AUDIT_SOCKET=" + log.path};
};

TEST_F(HostileAuditLog, RootChangingAnotherUsersProcessIsLoggedWithWhoWhatAndBeforeAfter) {
    TestUser alice("gpaudit");
    // A command line that tries to end the record's quoted value and add keys of its own.
    const pid_t worker = start_worker_as(alice, env, "job\" owner=\"root\nforged=1");
    ASSERT_FALSE(wait_for_slot(registry, worker).empty()) << "the worker did not register";
    const Outcome set = gpupart({"set", std::to_string(worker), "gpc1", "--snapshot", "builtin:h200"}, env);
    EXPECT_EQ(set.exit_code, 0) << set.out << set.err;
    const std::string record = log.receive();
    // Undo is a change like any other: logged the same way, with the masks the other way round.
    const Outcome undo = gpupart({"undo", "--snapshot", "builtin:h200"}, env);
    EXPECT_EQ(undo.exit_code, 0) << undo.out << undo.err;
    const std::string undone = log.receive();
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
    ASSERT_FALSE(record.empty()) << "nothing was logged";
    const std::string head = "<" + std::to_string(LOG_AUTHPRIV | LOG_NOTICE) + ">gpupart[";
    EXPECT_EQ(record.rfind(head, 0), 0u) << record;
    for (const std::string& part :
         {std::string("changed another user's process: uid=0 user=\"root\""), "action=\"set " + std::to_string(worker) + " gpc1\"",
          "journal_entry=1 pid=" + std::to_string(worker) + " start_time=",
          "owner_uid=" + std::to_string(alice.uid) + " owner=\"gpaudit\"",
          std::string("command=\"gpupart-demo-worker job\\x22 owner=\\x22root\\nforged=1 (simulated workload, no GPU)\""),
          std::string("before=0,8,16,24 after=1,9,17,25,32,39,46,53 before_mask=0x"), std::string(" after_mask=0x")})
        EXPECT_NE(record.find(part), std::string::npos) << "missing " << part << " in\n" << record;
    EXPECT_EQ(record.find('\n'), std::string::npos) << "one line: " << record;
    EXPECT_NE(undone.find("action=\"undo #1 (set " + std::to_string(worker) + " gpc1)\" journal_entry=2"), std::string::npos) << undone;
    EXPECT_NE(undone.find("before=1,9,17,25,32,39,46,53 after=0,8,16,24"), std::string::npos) << undone;
    EXPECT_EQ(log.receive(200), "") << "one record for each change";
}

TEST_F(HostileAuditLog, ChangingOnesOwnProcessIsNotLogged) {
    DemoWorker mine(registry, "mine");  // runs as root, like the gpupart below
    const Outcome set = gpupart({"set", std::to_string(mine.pid), "gpc1", "--snapshot", "builtin:h200"}, env);
    EXPECT_EQ(set.exit_code, 0) << set.out << set.err;
    EXPECT_EQ(log.receive(300), "");
}

TEST_F(HostileAuditLog, ARecordThatCannotBeDeliveredIsSaidNotSwallowed) {
    TestUser alice("gpaudit");
    const pid_t worker = start_worker_as(alice, env);
    ASSERT_FALSE(wait_for_slot(registry, worker).empty()) << "the worker did not register";
    std::vector<std::string> nowhere = env;
    nowhere.back() = "GPUPART_AUDIT_SOCKET=" + (scratch / "no-such.sock");
    const Outcome set = gpupart({"set", std::to_string(worker), "gpc1", "--snapshot", "builtin:h200"}, nowhere);
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
    EXPECT_EQ(set.exit_code, 0) << "the change is made and journaled: " << set.err;
    EXPECT_NE(set.err.find("gpupart: note: audit record for process " + std::to_string(worker) + " not sent: GPUPART_AUDIT_SOCKET "),
              std::string::npos) << set.err;
}

}  // namespace
}  // namespace gpupart::hostile
