// What a user plants in their own registry directories never multiplies a process or blocks another
// user's: copies of a live slot in thousands of twin directories are one row (and output stays bounded),
// and a file named after another user's process, in the planter's directory, never stands in for its slot.
// Real users, a real registry in a scratch directory, real demo workers.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostile_support.hpp"
#include "registry/registry.hpp"

namespace gpupart::hostile {
namespace {

// Each user's own journal, in a directory anyone may add to (as /tmp).
std::vector<std::string> env_for(const std::string& registry, const ScratchDir& scratch, const std::string& who = "root") {
    const std::string journals = scratch / "journals";
    ::mkdir(journals.c_str(), 01777);
    ::chmod(journals.c_str(), 01777);
    return {"GPUPART_REGISTRY_DIR=" + registry, "GPUPART_JOURNAL=" + journals + "/" + who + ".jsonl"};
}

std::string make_root(const ScratchDir& scratch) {
    const std::string root = scratch / "registry";
    EXPECT_EQ(::mkdir(root.c_str(), 01777), 0);
    EXPECT_EQ(::chmod(root.c_str(), 01777), 0);
    return root;
}

// The slot of `pid` once its worker registered ("" after 3 s).
std::string slot_of(const std::string& root, pid_t pid) {
    for (int i = 0; i < 300; ++i) {
        for (const auto& entry : Registry(root).list())
            if (entry.record && entry.record->pid == pid) return entry.path;
        ::usleep(10000);
    }
    return "";
}

// Runs `plant` as `user` in a child (what that user could do by hand); true when it returned true.
template <typename Plant>
bool as_user(const TestUser& user, Plant plant) {
    const pid_t child = ::fork();
    if (child == 0) {
        if (::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) ::_exit(125);
        ::_exit(plant() ? 0 : 1);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool copy_into(const std::string& from, const std::string& dir) {
    std::error_code error;
    if (!std::filesystem::create_directory(dir, error)) return false;
    ::chmod(dir.c_str(), 0755);
    return std::filesystem::copy_file(from, dir + "/" + std::filesystem::path(from).filename().string(), error);
}

std::size_t lines_with(const std::string& text, const std::string& word) {
    std::size_t count = 0;
    for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
    return count;
}

void stop(pid_t worker) {
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
}

// 1,000 twins already made main print 73 MB from one `set`: enough to fail the bound, and cheap enough for CI.
constexpr std::size_t kTwins = 1000;
constexpr std::size_t kBoundedBytes = 64 * 1024;  // what any of the commands below may print here

TEST(HostilePlantedCopies, ThousandsOfTwinCopiesOfALiveSlotAreOneRowAndOutputStaysBounded) {
    if (!is_root()) GTEST_SKIP() << "needs root to make test users";
    ScratchDir scratch;
    TestUser alice("gpalice");
    TestUser mallory("gpmallory");
    const std::string root = make_root(scratch);
    const auto env = env_for(root, scratch);
    const pid_t victim = start_worker_as(alice, env);
    const pid_t planter = start_worker_as(mallory, env);
    const std::string victim_slot = slot_of(root, victim);
    const std::string slot = slot_of(root, planter);
    ASSERT_FALSE(victim_slot.empty() || slot.empty()) << "the workers did not register";
    const std::string own_dir = std::filesystem::path(slot).parent_path();
    ASSERT_TRUE(as_user(mallory, [&] {
        for (std::size_t i = 0; i < kTwins; ++i)
            if (!copy_into(slot, own_dir + ".t" + std::to_string(i))) return false;
        for (int i = 0; i < 100; ++i)  // and files that are no slot, each a row of its own
            std::ofstream(own_dir + "/" + std::to_string(900000 + i) + "-1.slot") << "x";
        return true;
    })) << "mallory could not copy her slot into her twin directories";

    std::size_t rows = 0;
    for (const auto& entry : Registry(root).list())
        if (entry.record && entry.record->pid == planter) {
            ++rows;
            EXPECT_EQ(entry.path, slot) << "the file in her plain directory is the process's slot";
            EXPECT_EQ(entry.copies, kTwins);
        }
    EXPECT_EQ(rows, 1u) << "one process, one row";

    // Alice's commands: bounded in bytes and in findings, whatever Mallory planted.
    const auto alice_env = env_for(root, scratch, alice.name);
    const Outcome list = gpupart({"list"}, alice_env, alice.uid, alice.gid);
    EXPECT_EQ(list.exit_code, 0) << list.err;
    EXPECT_LT(list.out.size() + list.err.size(), kBoundedBytes);
    EXPECT_NE(list.out.find(std::to_string(kTwins) + " more files of gpmallory name it too"), std::string::npos) << list.out;
    EXPECT_NE(list.out.find("and 50 more files that cannot be used: not shown"), std::string::npos) << list.out;
    const Outcome json = gpupart({"list", "--json"}, alice_env, alice.uid, alice.gid);
    EXPECT_EQ(json.exit_code, 0) << json.err;
    EXPECT_LT(json.out.size(), kBoundedBytes);
    const Outcome check = gpupart({"check", "--snapshot", "builtin:h200"}, alice_env, alice.uid, alice.gid);
    EXPECT_LT(check.out.size() + check.err.size(), kBoundedBytes);
    EXPECT_EQ(lines_with(check.out, "[overlap;"), 1u) << "alice and mallory share TPCs 0-3, once:\n" << check.out;
    const Outcome set = gpupart({"set", std::to_string(victim), "gpc1", "--snapshot", "builtin:h200"}, alice_env, alice.uid, alice.gid);
    EXPECT_EQ(set.exit_code, 0) << set.out << set.err;
    EXPECT_LT(set.out.size() + set.err.size(), kBoundedBytes);
    EXPECT_LE(lines_with(set.out, "[overlap;"), 1u) << set.out;
    stop(victim);
    stop(planter);
}

TEST(HostilePlantedCopies, AFileNamedAfterAnotherUsersProcessInThePlantersDirectoryBlocksNoChange) {
    if (!is_root()) GTEST_SKIP() << "needs root to make test users";
    ScratchDir scratch;
    TestUser alice("gpalice");
    TestUser mallory("gpmallory");
    const std::string root = make_root(scratch);
    const auto env = env_for(root, scratch);
    const pid_t victim = start_worker_as(alice, env);
    const pid_t planter = start_worker_as(mallory, env);  // her own directory exists from here
    const std::string slot = slot_of(root, victim);
    ASSERT_FALSE(slot.empty() || slot_of(root, planter).empty()) << "the workers did not register";
    const std::string name = std::filesystem::path(slot).filename().string();
    const std::string dir = root + "/u" + std::to_string(mallory.uid);
    ASSERT_TRUE(as_user(mallory, [&] {
        std::error_code error;
        { std::ofstream(dir + "/" + name) << "not a slot"; }  // a regular file
        { std::ofstream(root + "/" + name) << "not a slot"; }  // and one in the sticky root, outside any user directory
        std::filesystem::create_directory(dir + ".fifo", error);
        ::chmod((dir + ".fifo").c_str(), 0755);
        if (::mkfifo((dir + ".fifo/" + name).c_str(), 0644) != 0) return false;  // a FIFO
        return copy_into(slot, dir + ".forged");  // alice's header, mallory's file
    })) << "mallory could not plant";

    for (const auto& entry : Registry(root).list()) {
        if (entry.path.find("/u" + std::to_string(mallory.uid)) == std::string::npos || !entry.path.ends_with(name)) continue;
        EXPECT_TRUE(entry.stranger && !entry.record) << entry.path << ": " << entry.problem;
    }
    for (const std::optional<uid_t> who : {std::optional<uid_t>(alice.uid), std::optional<uid_t>()}) {
        const std::optional<gid_t> group = who ? std::optional<gid_t>(alice.gid) : std::nullopt;
        const auto own_env = env_for(root, scratch, who ? alice.name : "root");
        const Outcome set = gpupart({"set", std::to_string(victim), "gpc1", "--snapshot", "builtin:h200"}, own_env, who, group);
        EXPECT_EQ(set.exit_code, 0) << (who ? "alice" : "root") << ": " << set.out << set.err;
        const Outcome undo = gpupart({"undo", "--snapshot", "builtin:h200"}, own_env, who, group);
        EXPECT_EQ(undo.exit_code, 0) << (who ? "alice" : "root") << ": " << undo.out << undo.err;
    }
    const Outcome check = gpupart({"check", "--snapshot", "builtin:h200"}, env_for(root, scratch, alice.name), alice.uid, alice.gid);
    EXPECT_EQ(check.out.find("unreadable-slot"), std::string::npos) << "mallory's files are not alice's slot:\n" << check.out;
    stop(victim);
    stop(planter);
}

}  // namespace
}  // namespace gpupart::hostile
