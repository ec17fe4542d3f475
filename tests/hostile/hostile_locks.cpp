// Locks another user can take: any user may open a slot or a rules file to read it, and a read lock
// (fcntl F_OFD_SETLK, F_RDLCK) held on it kept every `gpupart set` out (it gave up after 2 s) and made
// `profile apply` fail, root's included. Writers now lock "<user dir>/writers.lock", which only they can
// open, and replace rules whole by rename. Real users: a victim with a running process, an attacker
// holding read locks on everything of the victim's and root's that it can open.
#include <gtest/gtest.h>

#include <filesystem>

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostile_support.hpp"

namespace gpupart::hostile {
namespace {

std::string find_slot(const std::string& dir) {
    for (int i = 0; i < 300; ++i) {
        std::error_code ignored;
        for (const auto& item : std::filesystem::directory_iterator(dir, ignored))
            if (item.path().extension() == ".slot") return item.path();
        ::usleep(10000);
    }
    return "";
}

// A process of `user` holding a read lock on each of `paths` until killed; returns once they are held.
pid_t hold_read_locks(const TestUser& user, const std::vector<std::string>& paths) {
    int ready[2];
    if (::pipe(ready) != 0) return -1;
    const pid_t holder = ::fork();
    if (holder == 0) {
        ::close(ready[0]);
        if (::setgroups(0, nullptr) != 0 || ::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) ::_exit(125);
        char held = 1;
        for (const auto& path : paths) {
            const int fd = ::open(path.c_str(), O_RDONLY);
            struct flock request {};
            request.l_type = F_RDLCK;
            request.l_whence = SEEK_SET;
            if (fd < 0 || ::fcntl(fd, F_OFD_SETLK, &request) != 0) held = 0;  // the fd stays open: the lock stays
        }
        if (::write(ready[1], &held, 1) != 1) ::_exit(1);
        ::pause();
        ::_exit(0);
    }
    ::close(ready[1]);
    char held = 0;
    const bool answered = ::read(ready[0], &held, 1) == 1;
    ::close(ready[0]);
    return answered && held == 1 ? holder : -holder;
}

TEST(HostileLocks, ReadLocksOnSlotsAndRulesNeverBlockSetOrProfileApply) {
    if (!is_root()) GTEST_SKIP() << "needs root to make test users";
    ScratchDir scratch;
    TestUser victim("gpvictim");
    TestUser attacker("gpattacker");
    const std::string root = scratch / "registry";
    ASSERT_EQ(::mkdir(root.c_str(), 01777), 0);
    ASSERT_EQ(::chmod(root.c_str(), 01777), 0);
    const std::string victim_home = scratch / "victim";
    ASSERT_EQ(::mkdir(victim_home.c_str(), 0700), 0);
    ASSERT_EQ(::chown(victim_home.c_str(), victim.uid, victim.gid), 0);
    const std::vector<std::string> root_env = {"GPUPART_REGISTRY_DIR=" + root, "GPUPART_JOURNAL=" + (scratch / "root.jsonl"),
                                               "XDG_CONFIG_HOME=" + (scratch / "root-config")};
    const std::vector<std::string> victim_env = {"GPUPART_REGISTRY_DIR=" + root, "GPUPART_JOURNAL=" + victim_home + "/h.jsonl",
                                                 "XDG_CONFIG_HOME=" + victim_home + "/config"};
    const pid_t worker = start_worker_as(victim, victim_env);
    const std::string victim_dir = root + "/u" + std::to_string(victim.uid);
    const std::string slot = find_slot(victim_dir);
    ASSERT_FALSE(slot.empty()) << "the victim's worker did not register";
    const std::string pid = std::to_string(worker);
    const std::vector<std::string> h200 = {"--snapshot", "builtin:h200"};
    auto cli = [&](std::vector<std::string> args, const TestUser* as) {
        args.insert(args.end(), h200.begin(), h200.end());
        return as ? gpupart(args, victim_env, as->uid, as->gid, 20000) : gpupart(args, root_env, std::nullopt, std::nullopt, 20000);
    };
    const std::vector<const TestUser*> users = {nullptr, &victim};  // root, the victim
    // Rules of root and of the victim, armed before the attack; a second profile of each to apply during it.
    for (const TestUser* as : users)
        for (const std::string name : {"first", "second"}) {
            const Outcome saved = cli({"profile", "save", name}, as);
            ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err;
        }
    for (const TestUser* as : users) {
        const Outcome applied = cli({"profile", "apply", "first"}, as);
        ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
    }
    ASSERT_TRUE(std::filesystem::exists(root + "/u0/rules"));
    ASSERT_TRUE(std::filesystem::exists(victim_dir + "/rules"));
    // The writers' lock: the victim's, and nobody else may open it.
    struct stat lock {};
    ASSERT_EQ(::stat((victim_dir + "/writers.lock").c_str(), &lock), 0);
    EXPECT_EQ(lock.st_uid, victim.uid);
    EXPECT_EQ(lock.st_mode & 0777, 0600u);

    const pid_t holder = hold_read_locks(attacker, {slot, root + "/u0/rules", victim_dir + "/rules"});
    ASSERT_GT(holder, 0) << "the attacker could not take its read locks: the test would prove nothing";
    const Outcome by_root = cli({"set", pid, "gpc1"}, nullptr);
    EXPECT_EQ(by_root.exit_code, 0) << by_root.out << by_root.err;
    const Outcome by_victim = cli({"set", pid, "gpc2"}, &victim);
    EXPECT_EQ(by_victim.exit_code, 0) << by_victim.out << by_victim.err;
    const Outcome listed = gpupart({"list", "--json"}, root_env);
    EXPECT_NE(listed.out.find("\"requested\""), std::string::npos) << listed.out << listed.err;
    for (const TestUser* as : users) {
        const Outcome applied = cli({"profile", "apply", "second"}, as);
        EXPECT_EQ(applied.exit_code, 0) << (as ? "victim: " : "root: ") << applied.out << applied.err;
    }
    const Outcome undone = cli({"undo"}, &victim);
    EXPECT_EQ(undone.exit_code, 0) << undone.out << undone.err;
    ::kill(holder, SIGKILL);
    ::waitpid(holder, nullptr, 0);
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
}

// The writers' lock cannot be planted or widened by anyone but the victim: the directory is the victim's
// alone, and a lock file others may open is closed to them again by the next writer.
TEST(HostileLocks, AWritersLockOthersMayOpenIsClosedAgainByTheNextWriter) {
    if (!is_root()) GTEST_SKIP() << "needs root to make test users";
    ScratchDir scratch;
    TestUser victim("gpvictim");
    const std::string root = scratch / "registry";
    ASSERT_EQ(::mkdir(root.c_str(), 01777), 0);
    ASSERT_EQ(::chmod(root.c_str(), 01777), 0);
    const std::vector<std::string> env = {"GPUPART_REGISTRY_DIR=" + root, "GPUPART_JOURNAL=" + (scratch / "root.jsonl")};
    const pid_t worker = start_worker_as(victim, env);
    const std::string victim_dir = root + "/u" + std::to_string(victim.uid);
    ASSERT_FALSE(find_slot(victim_dir).empty());
    const std::string lock = victim_dir + "/writers.lock";
    ASSERT_EQ(::chmod(lock.c_str(), 0644), 0);  // as the victim may do by mistake
    const Outcome set = gpupart({"set", std::to_string(worker), "gpc1", "--snapshot", "builtin:h200"}, env);
    EXPECT_EQ(set.exit_code, 0) << set.out << set.err;
    struct stat info {};
    ASSERT_EQ(::stat(lock.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600u);
    // A slot made by a shim of the version before has no writers' lock beside it: root's set makes it, the
    // victim's.
    ASSERT_EQ(::unlink(lock.c_str()), 0);
    const Outcome again = gpupart({"set", std::to_string(worker), "gpc2", "--snapshot", "builtin:h200"}, env);
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    ASSERT_EQ(::stat(lock.c_str(), &info), 0);
    EXPECT_EQ(info.st_uid, victim.uid);
    EXPECT_EQ(info.st_mode & 0777, 0600u);
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
}

}  // namespace
}  // namespace gpupart::hostile
