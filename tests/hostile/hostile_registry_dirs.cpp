// Classes 2 (who may write a slot), 6 (whose registry directory it is) and 7 (squatting) of the hostile-files checks,
// with real directories, real symlinks and real users.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostile_support.hpp"
#include "registry/registry.hpp"
#include "registry/registry_slot.h"

namespace gpupart::hostile {
namespace {

std::vector<std::string> env_for(const std::string& registry, const ScratchDir& scratch) {
    return {"GPUPART_REGISTRY_DIR=" + registry, "GPUPART_JOURNAL=" + (scratch / "journal.jsonl")};
}

std::string make_root(const ScratchDir& scratch, mode_t mode = 01777) {
    const std::string root = scratch / "registry";
    EXPECT_EQ(::mkdir(root.c_str(), 0700), 0);
    EXPECT_EQ(::chmod(root.c_str(), mode), 0);
    return root;
}

TEST(HostileRegistryDirs, ARootThatIsASymlinkIsRefusedAndNothingInItsTargetIsCollected) {
    ScratchDir scratch;
    const std::string target = scratch / "elsewhere";
    ASSERT_EQ(::mkdir(target.c_str(), 01777), 0);
    ASSERT_EQ(::mkdir((target + "/u0").c_str(), 0755), 0);
    { std::ofstream(target + "/u0/999999-1.slot") << std::string(4096, 'x'); }  // "gone": list would collect it
    const std::string link = scratch / "registry";
    ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
    const Outcome outcome = gpupart({"list"}, env_for(link, scratch));
    EXPECT_EQ(outcome.exit_code, 1) << outcome.out << outcome.err;
    EXPECT_NE(outcome.err.find("is a symbolic link: refused"), std::string::npos) << outcome.err;
    EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << "one line: " << outcome.err;
    EXPECT_TRUE(std::filesystem::exists(target + "/u0/999999-1.slot"));
}

TEST(HostileRegistryDirs, ARootThatIsAFileOrUnsafelyWritableIsRefused) {
    ScratchDir scratch;
    const std::string file = scratch / "file";
    { std::ofstream(file) << "x"; }
    Outcome outcome = gpupart({"list"}, env_for(file, scratch));
    EXPECT_EQ(outcome.exit_code, 1);
    EXPECT_NE(outcome.err.find("is not a directory"), std::string::npos) << outcome.err;
    const std::string open_dir = make_root(scratch, 0777);  // writable by all, no sticky bit
    outcome = gpupart({"list"}, env_for(open_dir, scratch));
    EXPECT_EQ(outcome.exit_code, 1);
    EXPECT_NE(outcome.err.find("writable by others without the sticky bit"), std::string::npos) << outcome.err;
}

TEST(HostileRegistryDirs, ARootOwnedByAnotherUserIsRefused) {
    if (!is_root()) GTEST_SKIP() << "needs root to make a test user";
    ScratchDir scratch;
    TestUser mallory("gpmallory");
    const std::string root = make_root(scratch);
    ASSERT_EQ(::chown(root.c_str(), mallory.uid, mallory.gid), 0);  // mallory made it first
    const Outcome outcome = gpupart({"list"}, env_for(root, scratch));
    EXPECT_EQ(outcome.exit_code, 1);
    EXPECT_NE(outcome.err.find("belongs to uid " + std::to_string(mallory.uid) + ", not root or you"), std::string::npos)
        << outcome.err;
    // The demo worker, like the shim, refuses to register there and says why (exit 1, not 0).
    const Outcome worker = run({GPUPART_DEMO_WORKER, "w", "0xf", "0xff", "1"}, env_for(root, scratch));
    EXPECT_EQ(worker.exit_code, 1);
    EXPECT_NE(worker.err.find("not root or you"), std::string::npos) << worker.err;
}

// Alice and Mallory share the primary group `users`: under the old /dev/shm fallback Mallory could
// rewrite or truncate Alice's slots through the group bit. Now a slot is 0644 in Alice's own directory.
TEST(HostileRegistryDirs, AnotherMemberOfTheOwnersGroupCannotWriteTruncateOrRemoveASlot) {
    if (!is_root()) GTEST_SKIP() << "needs root to make test users";
    ScratchDir scratch;
    TestUser alice("gpalice", "users");
    TestUser mallory("gpmallory", "users");
    const std::string root = make_root(scratch);
    const auto env = env_for(root, scratch);
    // Alice's worker, running until killed.
    const pid_t worker = start_worker_as(alice, env);
    std::string slot;
    for (int i = 0; i < 300 && slot.empty(); ++i) {
        const std::string dir = root + "/u" + std::to_string(alice.uid);
        std::error_code ignored;
        for (const auto& item : std::filesystem::directory_iterator(dir, ignored))
            if (item.path().extension() == ".slot") slot = item.path();
        if (slot.empty()) ::usleep(10000);
    }
    ASSERT_FALSE(slot.empty()) << "alice's worker did not register";
    struct stat info {};
    ASSERT_EQ(::stat(slot.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 07777, 0644u);
    EXPECT_EQ(info.st_uid, alice.uid);

    // Mallory: no write open, no truncate, no unlink, no set.
    const pid_t attack = ::fork();
    if (attack == 0) {
        if (::setgid(mallory.gid) != 0 || ::setuid(mallory.uid) != 0) ::_exit(125);
        if (::open(slot.c_str(), O_WRONLY) >= 0) ::_exit(1);
        if (::truncate(slot.c_str(), 0) == 0) ::_exit(2);
        if (::unlink(slot.c_str()) == 0) ::_exit(3);
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(attack, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "mallory succeeded at step " << WEXITSTATUS(status);
    const Outcome set = gpupart({"set", std::to_string(worker), "gpc1", "--snapshot", "builtin:h200"}, env, mallory.uid, mallory.gid);
    EXPECT_EQ(set.exit_code, 1) << set.out << set.err;
    EXPECT_NE(set.err.find("belongs to gpalice"), std::string::npos) << set.err;
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
}

// Class 7: Mallory takes the name of Alice's directory first. Alice registers anyway (in a twin only she
// owns), every front end shows her process, and the squatted directory is named as what it is.
TEST(HostileRegistryDirs, ASquattedUserDirectoryBlocksNothing) {
    if (!is_root()) GTEST_SKIP() << "needs root to make test users";
    ScratchDir scratch;
    TestUser alice("gpalice");
    TestUser mallory("gpmallory");
    const std::string root = make_root(scratch);
    const std::string squatted = root + "/u" + std::to_string(alice.uid);
    ASSERT_EQ(::mkdir(squatted.c_str(), 0777), 0);
    ASSERT_EQ(::chown(squatted.c_str(), mallory.uid, mallory.gid), 0);
    const auto env = env_for(root, scratch);
    const pid_t worker = start_worker_as(alice, env);
    std::optional<SlotRecord> seen;
    std::vector<RegistryEntry> entries;
    for (int i = 0; i < 300 && !seen; ++i) {
        entries = Registry(root).list();
        for (const auto& entry : entries)
            if (entry.record && entry.record->pid == worker) seen = entry.record;
        if (!seen) ::usleep(10000);
    }
    ASSERT_TRUE(seen) << "alice's worker did not register";
    EXPECT_EQ(seen->path.rfind(squatted + ".", 0), 0u) << seen->path;  // the twin "u<uid>.<random>"
    bool named = false;
    for (const auto& entry : entries)
        named = named || (entry.path == squatted && entry.problem.find("squatted") != std::string::npos);
    EXPECT_TRUE(named) << "the squatted directory is reported";
    // Alice's own later calls find the same twin (the shim and `profile apply` must agree).
    const pid_t probe = ::fork();
    if (probe == 0) {
        if (::setgid(alice.gid) != 0 || ::setuid(alice.uid) != 0) ::_exit(125);
        char dir[512];
        if (gpupart_user_dir(root.c_str(), alice.uid, 1, dir, sizeof dir) != 0) ::_exit(1);
        ::_exit(std::filesystem::path(seen->path).parent_path() == dir ? 0 : 2);
    }
    int status = 0;
    ::waitpid(probe, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    // And `gpupart set` as root reaches her process.
    const Outcome set = gpupart({"set", std::to_string(worker), "gpc1", "--snapshot", "builtin:h200"}, env);
    EXPECT_EQ(set.exit_code, 0) << set.out << set.err;
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
}

}  // namespace
}  // namespace gpupart::hostile

namespace gpupart::hostile {
namespace {

// The installed layout: a root:admins 3777 root (setgid, sticky). A user outside the admin group registers
// there; the kernel gives the user's directory the root's group and setgid bit, and gpupart must not chmod
// it away (a chmod by a non-member clears it). The slot then belongs to the admin group: a member may write
// it, a non-member may not.
TEST(HostileRegistryDirs, UnderASetgidRootAUserOutsideTheAdminGroupRegistersAndOnlyTheGroupMayWrite) {
    if (!is_root()) GTEST_SKIP() << "needs root to make test users and a group";
    ScratchDir scratch;
    run({"groupdel", "gpadmins"});
    ASSERT_EQ(run({"groupadd", "gpadmins"}).exit_code, 0);
    const group* admins = ::getgrnam("gpadmins");
    ASSERT_NE(admins, nullptr);
    const gid_t admin_gid = admins->gr_gid;
    TestUser alice("gpalice");
    TestUser bob("gpbob");
    const std::string root = make_root(scratch, 03777);
    ASSERT_EQ(::chown(root.c_str(), 0, admin_gid), 0);
    ASSERT_EQ(::chmod(root.c_str(), 03777), 0);
    const auto env = env_for(root, scratch);
    const pid_t worker = start_worker_as(alice, env);
    std::optional<SlotRecord> seen;
    for (int i = 0; i < 300 && !seen; ++i) {
        for (const auto& entry : Registry(root).list())
            if (entry.record && entry.record->pid == worker) seen = entry.record;
        if (!seen) ::usleep(10000);
    }
    ASSERT_TRUE(seen) << "alice's worker did not register (or her directory was not trusted)";
    struct stat dir {};
    ASSERT_EQ(::stat(std::filesystem::path(seen->path).parent_path().c_str(), &dir), 0);
    EXPECT_NE(dir.st_mode & S_ISGID, 0u) << "the setgid bit was cleared";
    EXPECT_EQ(dir.st_gid, admin_gid);
    struct stat slot {};
    ASSERT_EQ(::stat(seen->path.c_str(), &slot), 0);
    EXPECT_EQ(slot.st_mode & 0777, 0664u);
    EXPECT_EQ(slot.st_gid, admin_gid);
    // bob, a member of the admin group, may open it for writing; alice's other self, no.
    auto can_write_as = [&](const TestUser& user, bool member) {
        const pid_t child = ::fork();
        if (child == 0) {
            const gid_t groups[1] = {admin_gid};
            if (::setgroups(member ? 1 : 0, groups) != 0 || ::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) ::_exit(125);
            ::_exit(::open(seen->path.c_str(), O_WRONLY) >= 0 ? 0 : 1);
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    };
    EXPECT_TRUE(can_write_as(bob, true));
    EXPECT_FALSE(can_write_as(bob, false));
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
    run({"groupdel", "gpadmins"});
}

}  // namespace
}  // namespace gpupart::hostile
