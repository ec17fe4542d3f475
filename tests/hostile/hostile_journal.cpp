// Hostile files, the journal (and its part of blocking opens and wrong answers): whatever happens to the journal,
// the slot and the journal agree, through the real `gpupart` binary. A change is journaled as an intent
// under the journal's lock, applied, then finished; a killed gpupart's intent is finished by the next
// reader from the slots' generations.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <iterator>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "controller/journal.hpp"
#include "controller_test_fixture.hpp"
#include "hostile_support.hpp"
#include "registry/registry.hpp"
#include "registry_test_support.hpp"

namespace gpupart::hostile {
namespace {

using test::RegisteredChild;
using test::TempRegistry;

struct HostileJournal : ::testing::Test {
    TempRegistry registry;
    ScratchDir scratch;
    std::string journal = scratch / "history.jsonl";
    std::vector<std::string> env() const { return {"GPUPART_REGISTRY_DIR=" + registry.dir, "GPUPART_JOURNAL=" + journal}; }
    Outcome set(int pid, const std::string& tpcs, const std::vector<std::string>& extra_env = {}) const {
        auto all = env();
        all.insert(all.end(), extra_env.begin(), extra_env.end());
        return gpupart({"set", std::to_string(pid), tpcs, "--snapshot", "builtin:h200"}, all, std::nullopt, std::nullopt, 10000);
    }
    // The mask as the slot holds it: launch-descriptor bits (read without the GPU's map).
    std::string mask_of(int pid) const {
        const auto record = Registry(registry.dir).find_live(pid);
        return record.control && test::has_mask_on(*record.control) ? test::allowed_on(*record.control).to_list() : "all";
    }
    // The same mask in TPC numbers, as front ends read it through the H200's map.
    std::string tpcs_of(int pid) const {
        const auto record = Registry(registry.dir, test::builtin_h200()).find_live(pid);
        return record.control && test::has_mask_on(*record.control) ? test::allowed_on(*record.control).to_list() : "all";
    }
};

std::string file_text(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

int line_count(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

TEST_F(HostileJournal, ConcurrentSetsFromSeveralProcessesGetUniqueIncreasingIds) {
    constexpr int kProcesses = 6;
    std::vector<std::unique_ptr<RegisteredChild>> children;
    for (int i = 0; i < kProcesses; ++i) children.push_back(std::make_unique<RegisteredChild>(registry.dir, nullptr));
    // All started at once with posix_spawn (no threads: a fork beside other threads can deadlock in malloc).
    std::vector<std::string> environment;
    for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
    for (const auto& entry : env()) environment.push_back(entry);
    std::vector<char*> envp;
    for (auto& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);
    std::vector<pid_t> setters;
    for (int i = 0; i < kProcesses; ++i) {
        std::vector<std::string> args = {GPUPART_CLI_PATH, "set", std::to_string(children[i]->pid), "gpc" + std::to_string(i),
                                         "--snapshot", "builtin:h200"};
        std::vector<char*> argv;
        for (auto& arg : args) argv.push_back(arg.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        ::posix_spawn_file_actions_init(&actions);
        ::posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
        pid_t pid = -1;
        ASSERT_EQ(::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()), 0);
        ::posix_spawn_file_actions_destroy(&actions);
        setters.push_back(pid);
    }
    for (const pid_t pid : setters) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a concurrent set failed (status " << status << ")";
    }
    const auto entries = Journal(journal).read();
    ASSERT_EQ(entries.size(), static_cast<std::size_t>(kProcesses));
    for (int i = 0; i < kProcesses; ++i) {
        EXPECT_EQ(entries[i].id, i + 1) << "ids are unique and increase in file order";
        ASSERT_EQ(entries[i].changes.size(), 1u);
        // Every slot holds what its entry says: its TPC numbers, as the descriptor bits the entry recorded.
        EXPECT_EQ(tpcs_of(entries[i].changes[0].pid), entries[i].changes[0].after.to_list());
        ASSERT_TRUE(entries[i].changes[0].after_bits.has_value());
        EXPECT_EQ(mask_of(entries[i].changes[0].pid), entries[i].changes[0].after_bits->to_list());
    }
    // Newest first: each child holds copies of the pipes of those forked before it.
    while (!children.empty()) children.pop_back();
}

TEST_F(HostileJournal, AJournalThatIsAFifoADirectoryADeviceOrASymlinkIsOneLineAndChangesNothing) {
    RegisteredChild child(registry.dir, "0xf");
    const std::string target = scratch / "target";
    { std::ofstream(target) << "not a journal, must stay as it is\n"; }
    ASSERT_EQ(::mkfifo(journal.c_str(), 0600), 0);
    const auto make_directory = [&] { return ::mkdir(journal.c_str(), 0700); };
    const auto make_symlink = [&] { return ::symlink(target.c_str(), journal.c_str()); };
    const auto make_device = [&] { return is_root() ? ::mknod(journal.c_str(), S_IFCHR | 0600, ::makedev(1, 3)) : ::mkfifo(journal.c_str(), 0600); };
    for (const auto& [kind, make] : std::vector<std::pair<std::string, std::function<int()>>>{
             {"FIFO", [] { return 0; }}, {"directory", make_directory}, {"device", make_device}, {"symlink", make_symlink}}) {
        if (kind != "FIFO") {
            ::rmdir(journal.c_str());
            ::unlink(journal.c_str());
            ASSERT_EQ(make(), 0) << kind;
        }
        for (const auto& args : std::vector<std::vector<std::string>>{{"history"}, {"undo", "--snapshot", "builtin:h200"}}) {
            const Outcome outcome = gpupart(args, env(), std::nullopt, std::nullopt, 5000);
            EXPECT_FALSE(outcome.timed_out) << args[0] << " hung on a journal that is a " << kind;
            EXPECT_NE(outcome.exit_code, 0) << args[0] << " on a " << kind << ":\n" << outcome.out;
            EXPECT_EQ(line_count(outcome.err), 1) << outcome.err;
        }
        const Outcome outcome = set(child.pid, "gpc1");
        EXPECT_FALSE(outcome.timed_out) << "set hung on a journal that is a " << kind;
        EXPECT_NE(outcome.exit_code, 0) << kind;
        EXPECT_EQ(line_count(outcome.err), 1) << kind << ": " << outcome.err;
        EXPECT_NE(outcome.err.find("nothing"), std::string::npos) << outcome.err;
        EXPECT_EQ(mask_of(child.pid), "0-3") << "a journal that is a " << kind << " left the mask applied";
    }
    EXPECT_EQ(file_text(target), "not a journal, must stay as it is\n") << "written through the symlink";
}

TEST_F(HostileJournal, AGarbageLineIsSkippedAndSaidOnceAndIdsGoOn) {
    RegisteredChild child(registry.dir, "0xf");
    ASSERT_EQ(set(child.pid, "gpc1").exit_code, 0);
    const int garbage_line = line_count(file_text(journal)) + 1;
    { std::ofstream(journal, std::ios::app) << "{\"id\": 7, torn by a full disk\n"; }
    const Outcome second = set(child.pid, "gpc2");
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(second.out.find("applied as #2"), std::string::npos) << second.out;
    EXPECT_EQ(line_count(second.err), 1) << "said once: " << second.err;
    EXPECT_NE(second.err.find(journal + ":" + std::to_string(garbage_line)), std::string::npos) << "names the line: " << second.err;
    const Outcome history = gpupart({"history"}, env());
    EXPECT_EQ(history.exit_code, 0) << history.err;
    EXPECT_NE(history.out.find("#2"), std::string::npos) << history.out;
    EXPECT_EQ(line_count(history.err), 1) << history.err;
    const Outcome undo = gpupart({"undo", "--snapshot", "builtin:h200"}, env());
    EXPECT_EQ(undo.exit_code, 0) << undo.err;
    EXPECT_EQ(mask_of(child.pid), "9-16") << "undo reverted #2";
}

TEST_F(HostileJournal, AJournalThatCannotBeAppendedLeavesSlotAndJournalAgreeing) {
    RegisteredChild child(registry.dir, "0xf");
    ASSERT_EQ(set(child.pid, "gpc1").exit_code, 0);
    const std::string before = file_text(journal);
    // A file size limit at the journal's size: the next line cannot be written (EFBIG, as on a full
    // disk). SIGXFSZ is ignored so the write fails instead of killing gpupart (the SIGKILL test covers that).
    struct sigaction ignore {};
    struct sigaction previous {};
    ignore.sa_handler = SIG_IGN;
    ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &previous), 0);
    const Outcome outcome = run({"prlimit", "--fsize=" + std::to_string(before.size() + 20), "--", GPUPART_CLI_PATH, "set",
                                 std::to_string(child.pid), "gpc2", "--snapshot", "builtin:h200"},
                                env());
    ::sigaction(SIGXFSZ, &previous, nullptr);
    EXPECT_NE(outcome.exit_code, 0);
    EXPECT_EQ(line_count(outcome.err), 1) << outcome.err;
    EXPECT_EQ(mask_of(child.pid), "9-16") << "the mask changed though the journal could not say so";
    EXPECT_EQ(file_text(journal), before) << "a torn line was left behind";
    const Outcome undo = gpupart({"undo", "--snapshot", "builtin:h200"}, env());
    EXPECT_EQ(undo.exit_code, 0) << "undo still reverts #1: " << undo.err;
    EXPECT_EQ(mask_of(child.pid), "0-3");
}

TEST_F(HostileJournal, GpupartKilledBetweenSlotWriteAndJournalLeavesHistoryAndUndoTruthful) {
    RegisteredChild child(registry.dir, "0xf");
    ASSERT_EQ(set(child.pid, "gpc1").exit_code, 0);
    // The test hook compiled into the real binary (README, "Test hooks"): SIGKILL right after the slots
    // were written, before the journal entry is finished.
    const Outcome killed = set(child.pid, "gpc2", {"GPUPART_TEST_KILL_AT=after-apply"});
    ASSERT_EQ(killed.signal, SIGKILL) << "the hook did not fire: " << killed.err;
    EXPECT_EQ(mask_of(child.pid), "18-25") << "the slot was written before the kill";
    const Outcome history = gpupart({"history", "--json"}, env());
    ASSERT_EQ(history.exit_code, 0) << history.err;
    EXPECT_NE(history.err.find("#2"), std::string::npos) << "the reader says it finished #2: " << history.err;
    const auto entries = Journal(journal).read();
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[1].id, 2);
    ASSERT_EQ(entries[1].changes.size(), 1u);
    EXPECT_EQ(entries[1].changes[0].after.to_list(), "2,10,18,26,33,40,47,54");  // gpc2: descriptor bits 18-25
    EXPECT_EQ(entries[1].changes[0].after_bits, TpcMask::range(18, 25));
    EXPECT_TRUE(entries[1].recovered.has_value());
    const Outcome undo = gpupart({"undo", "--snapshot", "builtin:h200"}, env());
    EXPECT_EQ(undo.exit_code, 0) << undo.err;
    EXPECT_EQ(mask_of(child.pid), "9-16") << "undo reverted the killed set";
}

TEST_F(HostileJournal, GpupartKilledBeforeTheSlotWriteLeavesNothingInTheHistory) {
    RegisteredChild child(registry.dir, "0xf");
    ASSERT_EQ(set(child.pid, "gpc1").exit_code, 0);
    const Outcome killed = set(child.pid, "gpc2", {"GPUPART_TEST_KILL_AT=before-apply"});
    ASSERT_EQ(killed.signal, SIGKILL) << "the hook did not fire: " << killed.err;
    EXPECT_EQ(mask_of(child.pid), "9-16");
    const Outcome next = set(child.pid, "gpc3");
    EXPECT_EQ(next.exit_code, 0) << next.err;
    EXPECT_NE(next.out.find("applied as #3"), std::string::npos) << "the killed change's id is not reused: " << next.out;
    const auto entries = Journal(journal).read();
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[1].id, 3);
}

TEST_F(HostileJournal, IdsAre64BitAndNeverWrap) {
    RegisteredChild child(registry.dir, "0xf");
    const std::string old_entry = R"({"id":2147483647,"time":"2024-01-01T00:00:00Z","uid":0,"user":"root","action":"set 1 gpc1",)"
                                  R"("undoes":null,"changes":[]})";
    { std::ofstream(journal) << old_entry << "\n"; }
    const Outcome outcome = set(child.pid, "gpc1");
    ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
    EXPECT_NE(outcome.out.find("applied as #2147483648"), std::string::npos) << outcome.out;
    const Outcome history = gpupart({"history", "--json"}, env());
    EXPECT_NE(history.out.find("\"id\": 2147483648"), std::string::npos) << history.out;
    const Outcome undo = gpupart({"undo", "--snapshot", "builtin:h200"}, env());
    EXPECT_EQ(undo.exit_code, 0) << undo.err;
    EXPECT_NE(undo.out.find("applied as #2147483649"), std::string::npos) << undo.out;

    // The last id there is: refused in one line, nothing changed.
    { std::ofstream(journal) << R"({"aborted":9223372036854775807,"why":"test"})" << "\n"; }
    const Outcome full = set(child.pid, "gpc2");
    EXPECT_NE(full.exit_code, 0);
    EXPECT_EQ(line_count(full.err), 1) << full.err;
    EXPECT_EQ(mask_of(child.pid), "0-3");
}

}  // namespace
}  // namespace gpupart::hostile
