// SMLP component files as the front ends read them: found in the trusted user directories of a real
// registry root, queues ordered as the layout defines them, free TPCs derived from the grants, holders
// that died marked, every rule the layout sets checked, and a busy locker never seen half-way.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/user_error.hpp"
#include "registry/registry_seqlock.h"
#include "smlp/smlp_file.hpp"
#include "registry_test_support.hpp"
#include "smlp_fixture.hpp"

using namespace gpupart;
using gpupart::test::FixtureComponent;
using gpupart::test::FixtureRequest;
using gpupart::test::TempRegistry;
using gpupart::test::user_dir_in;

namespace {

// A pid that names no process any more (a child that exited and was reaped).
int gone_pid() {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    return child;
}

FixtureComponent busy_component() {
    FixtureComponent c;
    c.name = "camera.pipeline";
    c.tpcs = TpcMask::range(0, 7);
    c.h = 2;
    c.fq_length = 2;
    c.gpu = "GPU-258f535b-999d-058c-3642-767b7fb8d4f0";
    c.requests = {
        {GPUPART_SMLP_SQ, 0, 0, 5, 3, TpcMask::range(4, 5), "detect", 4},
        {GPUPART_SMLP_PQ, 0, 0, 1, 10, {}, "low", 2},
        {GPUPART_SMLP_SQ, 0, 0, 9, 1, TpcMask::range(0, 1), "track", 4, GPUPART_SMLP_INHERIT_REFUSED, 9},
        {GPUPART_SMLP_FQ, 0, 0, 3, 7, {}, "plan", 1},
        {GPUPART_SMLP_PQ, 0, 0, 8, 12, {}, "urgent", 2},
        {GPUPART_SMLP_PQ, 0, 0, 8, 11, {}, "urgent-earlier", 2},
        {GPUPART_SMLP_FQ, 0, 0, 3, 6, {}, "map", 1},
    };
    return c;
}

std::string problem_of(const std::string& root) {
    const auto entries = list_smlp_components(root);
    if (entries.size() != 1) return "entries: " + std::to_string(entries.size());
    return entries.front().component ? "" : entries.front().problem;
}

// Writes `component` after `change` was made to its bytes; returns the only entry's problem ("" none).
std::string problem_after(const std::function<void(gpupart_smlp_file&)>& change, FixtureComponent component = busy_component()) {
    TempRegistry root;
    auto file = test::make_smlp_file(component);
    change(*file);
    test::write_smlp_file(user_dir_in(root.dir), *file, component.name + GPUPART_SMLP_SUFFIX);
    return problem_of(root.dir);
}

}  // namespace

TEST(SmlpFile, QueuesAreReadInTheirOrderWithTheFreeTpcs) {
    TempRegistry root;
    test::write_smlp_file(user_dir_in(root.dir), *test::make_smlp_file(busy_component()));
    const auto entries = list_smlp_components(root.dir);
    ASSERT_EQ(entries.size(), 1u);
    ASSERT_TRUE(entries[0].component) << entries[0].problem;
    const SmlpComponent& c = *entries[0].component;
    EXPECT_EQ(c.name, "camera.pipeline");
    EXPECT_EQ(c.owner, ::getuid());
    EXPECT_EQ(c.gpu, "GPU-258f535b-999d-058c-3642-767b7fb8d4f0");
    EXPECT_EQ(c.size, 8);
    EXPECT_EQ(c.granularity, 2u);
    EXPECT_EQ(c.fq_length, 2u);
    EXPECT_FALSE(c.changing);
    // SQ by ticket, FQ by ticket, PQ by priority then ticket.
    ASSERT_EQ(c.sq.size(), 2u);
    EXPECT_EQ(c.sq[0].label, "track");
    EXPECT_EQ(c.sq[1].label, "detect");
    ASSERT_EQ(c.fq.size(), 2u);
    EXPECT_EQ(c.fq[0].label, "map");
    EXPECT_EQ(c.fq[1].label, "plan");
    ASSERT_EQ(c.pq.size(), 3u);
    EXPECT_EQ(c.pq[0].label, "urgent-earlier");
    EXPECT_EQ(c.pq[1].label, "urgent");
    EXPECT_EQ(c.pq[2].label, "low");
    // The free TPCs are the component's less the holders'.
    EXPECT_EQ(c.free.to_list(), "2-3,6-7");
    ASSERT_NE(c.holder_of(5), nullptr);
    EXPECT_EQ(c.holder_of(5)->label, "detect");
    EXPECT_EQ(c.holder_of(2), nullptr);
    // What Rule 3 did, in words; and the holders are alive (this test process).
    EXPECT_EQ(inheritance_text(c.sq[0]), "inheritance of priority 9 refused by the OS (no CAP_SYS_NICE or RLIMIT_RTPRIO)");
    EXPECT_EQ(c.sq[0].liveness, Liveness::alive);
    EXPECT_EQ(c.sq[0].levels.size(), 4u);
    EXPECT_EQ(c.sq[0].granted_tpcs, 2u);
}

TEST(SmlpFile, AHolderThatDiedIsMarkedUntilItIsSwept) {
    TempRegistry root;
    FixtureComponent c;
    c.requests = {{GPUPART_SMLP_SQ, gone_pid(), 12345, 1, 1, TpcMask::range(0, 3), "crashed"}};
    test::write_smlp_file(user_dir_in(root.dir), *test::make_smlp_file(c));
    const auto entries = list_smlp_components(root.dir);
    ASSERT_TRUE(entries.at(0).component);
    ASSERT_EQ(entries[0].component->sq.size(), 1u);
    EXPECT_NE(entries[0].component->sq[0].liveness, Liveness::alive);
    EXPECT_EQ(entries[0].component->free.to_list(), "4-7");  // until the sweep frees them
}

TEST(SmlpFile, ALockerThatNeverFinishedShowsTheComponentWithoutQueues) {
    TempRegistry root;
    auto file = test::make_smlp_file(busy_component());
    file->header.seq = 7;  // odd: a locker killed inside its change (the next locker repairs it)
    test::write_smlp_file(user_dir_in(root.dir), *file);
    const auto entries = list_smlp_components(root.dir);
    ASSERT_TRUE(entries.at(0).component) << entries[0].problem;
    const SmlpComponent& c = *entries[0].component;
    EXPECT_TRUE(c.changing);
    EXPECT_TRUE(c.sq.empty() && c.pq.empty() && c.fq.empty());
    EXPECT_EQ(c.name, "camera.pipeline");
    EXPECT_EQ(c.size, 8);
}

TEST(SmlpFile, ValuesTheLayoutDoesNotAllowAreProblemsNotPictures) {
    EXPECT_EQ(problem_after([](gpupart_smlp_file&) {}), "");
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.requests[1].queue = 9; }).find("record 1 is in queue 9"), std::string::npos);
    // A grant outside the component, two holders of one TPC, a count that disagrees with the grant.
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.requests[0].granted[0] |= 1u << 9; }).find("outside the component's 0-7"),
              std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.requests[0].granted[0] = 0x3; }).find("that another holder holds too"),
              std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.requests[0].granted_tpcs = 4; }).find("says it holds 4 TPCs"), std::string::npos);
    // More FQ records than M, a granularity that does not divide H, levels beyond H/h, no TPC at all.
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.requests[1].queue = GPUPART_SMLP_FQ; }).find("3 requests are in the FQ, more than M = 2"),
              std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.header.h = 3; }).find("h = 3 does not divide H = 8"), std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.requests[3].level_count = 5; }).find("not 1 to H/h = 4"), std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { std::memset(f.header.tpcs, 0, sizeof f.header.tpcs); }).find("no TPC"),
              std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.header.fq_length = 0; }).find("M is 0"), std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.requests[2].inheritance = 5; }).find("inheritance state 5"), std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.requests[2].pid = -1; }).find("names process -1"), std::string::npos);
    // Another layout, a component not formed yet, an owner it does not have, a name that is not its file's.
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.header.layout_version = 4; }).find("registry layout version 4"), std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.header.state = 0; }).find("not formed yet"), std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { f.header.owner_uid += 1; }).find("claims owner uid"), std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { std::strcpy(f.header.name, "other"); }).find("calls itself 'other'"),
              std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { std::memset(f.header.name, 'a', sizeof f.header.name); }).find("not a component name"),
              std::string::npos);
    EXPECT_NE(problem_after([](gpupart_smlp_file& f) { std::memcpy(f.header.magic, "gpslot\0", 8); }).find("bad magic"), std::string::npos);
    // A file of a library from before TPC numbers holds descriptor bits: said in one line, never shown as numbers.
    const std::string before = problem_after([](gpupart_smlp_file& f) { f.header.flags = 0; });
    EXPECT_NE(before.find("made before TPC numbers (its TPCs are launch-descriptor bits): not shown"), std::string::npos) << before;
    EXPECT_EQ(before.find('\n'), std::string::npos);
}

TEST(SmlpFile, HostileFilesAreRefusedWithoutBlocking) {
    TempRegistry root;
    const std::string dir = user_dir_in(root.dir);
    ASSERT_EQ(::mkfifo((dir + "/fifo.smlp").c_str(), 0644), 0);  // an open would block: O_NONBLOCK
    std::filesystem::create_symlink(dir + "/fifo.smlp", dir + "/link.smlp");
    const auto file = test::make_smlp_file(busy_component());
    {
        const int fd = ::open((dir + "/huge.smlp").c_str(), O_WRONLY | O_CREAT, 0644);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::write(fd, file.get(), sizeof *file), static_cast<ssize_t>(sizeof *file));
        ASSERT_EQ(::ftruncate(fd, 1ll << 34), 0);  // 16 GiB, sparse
        ::close(fd);
    }
    {
        const int fd = ::open((dir + "/short.smlp").c_str(), O_WRONLY | O_CREAT, 0644);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::write(fd, file.get(), 2000), 2000);
        ::close(fd);
    }
    std::filesystem::create_directory(dir + "/dir.smlp");
    std::map<std::string, std::string> problems;
    for (const SmlpEntry& entry : list_smlp_components(root.dir)) {
        EXPECT_FALSE(entry.component) << entry.path;
        problems[entry.path.substr(entry.path.rfind('/') + 1)] = entry.problem;
    }
    EXPECT_NE(problems["fifo.smlp"].find("is a FIFO, not an SMLP component file"), std::string::npos) << problems["fifo.smlp"];
    EXPECT_NE(problems["link.smlp"].find("cannot open"), std::string::npos) << problems["link.smlp"];
    EXPECT_NE(problems["huge.smlp"].find("size 17179869184, expected 41984"), std::string::npos) << problems["huge.smlp"];
    EXPECT_NE(problems["short.smlp"].find("size 2000, expected 41984"), std::string::npos) << problems["short.smlp"];
    EXPECT_NE(problems["dir.smlp"].find("is a directory"), std::string::npos) << problems["dir.smlp"];
}

TEST(SmlpFile, OnlyTrustedUserDirectoriesAreRead) {
    TempRegistry root;
    const auto file = test::make_smlp_file(busy_component());
    // Outside any user directory, and in a user directory others may write.
    test::write_smlp_file(root.dir, *file);
    const std::string open_dir = root.dir + "/u" + std::to_string(::getuid() + 1);
    std::filesystem::create_directory(open_dir);
    ::chmod(open_dir.c_str(), 0777);
    test::write_smlp_file(open_dir, *file);
    const auto entries = list_smlp_components(root.dir);
    ASSERT_EQ(entries.size(), 2u);
    for (const SmlpEntry& entry : entries) EXPECT_FALSE(entry.component) << entry.path;
    const std::string all = entries[0].problem + "\n" + entries[1].problem;
    EXPECT_NE(all.find("outside any user directory: ignored"), std::string::npos) << all;
    EXPECT_NE(all.find("squatted"), std::string::npos) << all;  // u<uid+1> owned by us: not the user it names
}

TEST(SmlpFile, AFileOfAnotherUserInThisUsersDirectoryIsRefused) {
    if (::getuid() != 0) GTEST_SKIP() << "chown needs root";
    TempRegistry root;
    const std::string path = test::write_smlp_file(user_dir_in(root.dir), *test::make_smlp_file(busy_component()));
    ASSERT_EQ(::chown(path.c_str(), 4242, 4242), 0);
    EXPECT_NE(problem_of(root.dir).find("belongs to"), std::string::npos) << problem_of(root.dir);
}

TEST(SmlpFile, LabelsAreKeptAsWrittenAndEscapedToShow) {
    TempRegistry root;
    FixtureComponent c;
    c.requests = {{GPUPART_SMLP_SQ, 0, 0, 1, 1, TpcMask::range(0, 1), "\x1b[2J\x1b]0;pwned\x07x"}};
    test::write_smlp_file(user_dir_in(root.dir), *test::make_smlp_file(c));
    const auto entries = list_smlp_components(root.dir);
    ASSERT_TRUE(entries.at(0).component);
    const std::string& label = entries[0].component->sq.at(0).label;
    EXPECT_EQ(label, "\x1b[2J\x1b]0;pwned\x07x");
    EXPECT_EQ(one_line(label), "\\x1b[2J\\x1b]0;pwned\\x07x");
}

// A locker changes the queues in bursts as fast as it can, making seq odd for each change and moving the
// two holders' grants between each other through a state where both hold the same TPCs: a reader that
// ever took that state for the component's read a torn copy. The short pause after each burst lets a
// reader on a loaded machine finish a clean copy now and then; without it every read may give up as
// "changing" and the test would prove nothing either way.
TEST(SmlpFile, ABusyLockerIsNeverSeenHalfWay) {
    TempRegistry root;
    FixtureComponent c;
    c.requests = {{GPUPART_SMLP_SQ, 0, 0, 1, 1, TpcMask::range(0, 3), "a"}, {GPUPART_SMLP_SQ, 0, 0, 1, 2, TpcMask::range(4, 7), "b"}};
    const std::string path = test::write_smlp_file(user_dir_in(root.dir), *test::make_smlp_file(c));
    const pid_t locker = ::fork();
    if (locker == 0) {
        const int fd = ::open(path.c_str(), O_RDWR);
        auto* file = static_cast<gpupart_smlp_file*>(::mmap(nullptr, sizeof(gpupart_smlp_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
        for (std::uint64_t change = 1;; ++change) {
            if (change % 255 == 0) ::usleep(200);  // an odd burst: each pause shows the other order
            const std::uint32_t odd = gpupart_seq_write_begin(&file->header.seq);
            std::uint32_t first[4];
            for (int w = 0; w < 4; ++w) first[w] = gpupart_payload_load32(&file->requests[0].granted[w]);
            for (int w = 0; w < 4; ++w) gpupart_payload_store32(&file->requests[0].granted[w], file->requests[1].granted[w]);
            for (int w = 0; w < 4; ++w) gpupart_payload_store32(&file->requests[1].granted[w], first[w]);
            gpupart_seq_write_end(&file->header.seq, odd);
        }
    }
    const test::KilledAtExit stop(locker);
    ASSERT_TRUE(test::wait_for_writes(path, offsetof(gpupart_smlp_file, header) + offsetof(gpupart_smlp_component, seq), 10));
    std::set<std::string> seen;  // both orders of the grants: the locker really changed them under the reads
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    int clean = 0;
    for (int read = 0; read < 2000 || (seen.size() < 2 && std::chrono::steady_clock::now() < deadline); ++read) {
        const SmlpComponent component = read_smlp_component(path, ::getuid());  // throws on a torn copy
        if (component.changing) continue;
        ++clean;
        ASSERT_EQ(component.sq.size(), 2u);
        ASSERT_EQ((component.sq[0].granted | component.sq[1].granted), TpcMask::range(0, 7));
        seen.insert(component.sq[0].granted.to_list());
    }
    EXPECT_EQ(seen.size(), 2u) << clean << " clean reads";
}

TEST(SmlpFile, NamesAndDurations) {
    EXPECT_TRUE(smlp_name_valid("camera.pipeline-2_b"));
    EXPECT_FALSE(smlp_name_valid(".hidden"));
    EXPECT_FALSE(smlp_name_valid("a/b"));
    EXPECT_FALSE(smlp_name_valid(""));
    EXPECT_FALSE(smlp_name_valid(std::string(64, 'a')));
    EXPECT_EQ(smlp_duration_text(1'000'000'000, 1'340'000'000), "340 ms");
    EXPECT_EQ(smlp_duration_text(1'000'000'000, 3'500'000'000), "2.5 s");
    EXPECT_EQ(smlp_duration_text(0, 5), "-");
    EXPECT_EQ(to_string(GPUPART_SMLP_SQ), "SQ");
}
