// The SMLP's and libgpupart's files in the hands of an attacker, through the CLI as a user runs it: SMLP component files
// that are FIFOs, devices, symlinks, huge, truncated, another user's or hold queues that cannot be, labels
// with terminal escape codes, and a program's mask block with a stream count far past the slot's end. Each
// is one line (or one escaped field), never a hang, a crash or a raw escape on the terminal.
#include <gtest/gtest.h>

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hostile_support.hpp"
#include "registry/registry.hpp"
#include "registry/registry_slot.h"
#include "registry_test_support.hpp"
#include "smlp_fixture.hpp"

namespace gpupart::hostile {
namespace {

std::vector<std::string> env_for(const std::string& root) {
    return {"GPUPART_REGISTRY_DIR=" + root, "GPUPART_JOURNAL=" + root + "/history.jsonl"};
}

test::FixtureComponent component(const std::string& name, const std::string& label) {
    test::FixtureComponent c;
    c.name = name;
    c.requests = {{GPUPART_SMLP_SQ, 0, 0, 4, 1, TpcMask::range(0, 3), label}, {GPUPART_SMLP_PQ, 0, 0, 2, 2, {}, "waiting"}};
    return c;
}

bool has_escape(const std::string& text) { return text.find('\x1b') != std::string::npos || text.find('\x07') != std::string::npos; }

}  // namespace

TEST(HostileSmlpFiles, PlantedFilesAreOneLineEachAndTheGoodComponentIsShown) {
    ScratchDir scratch;
    const std::string root = scratch / "registry";
    ::mkdir(root.c_str(), 01777);
    ::chmod(root.c_str(), 01777);
    const std::string dir = test::user_dir_in(root);
    test::write_smlp_file(dir, *test::make_smlp_file(component("good", "\x1b]0;owned\x07\x1b[2Jlabel")));
    ASSERT_EQ(::mkfifo((dir + "/fifo.smlp").c_str(), 0644), 0);
    if (is_root()) {
        ASSERT_EQ(::mknod((dir + "/zero.smlp").c_str(), S_IFCHR | 0644, ::makedev(1, 5)), 0);
    }
    std::filesystem::create_symlink("/dev/zero", dir + "/link.smlp");
    {
        const int fd = ::open((dir + "/huge.smlp").c_str(), O_WRONLY | O_CREAT, 0644);
        ASSERT_EQ(::ftruncate(fd, 8ll << 30), 0);
        ::close(fd);
    }
    auto corrupt = test::make_smlp_file(component("corrupt", "x"));
    corrupt->requests[1].queue = GPUPART_SMLP_SQ;  // a second holder of the same TPCs
    mask_to_words(TpcMask::range(2, 5), corrupt->requests[1].granted);
    corrupt->requests[1].granted_tpcs = 4;
    test::write_smlp_file(dir, *corrupt);

    const Outcome text = gpupart({"smlp"}, env_for(root), std::nullopt, std::nullopt, 5000);
    ASSERT_FALSE(text.timed_out) << "gpupart smlp hung on a planted file";
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_FALSE(has_escape(text.out)) << text.out;
    EXPECT_NE(text.out.find("\\x1b]0;owned\\x07\\x1b[2Jlabel"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("good ("), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("fifo.smlp: is a FIFO, not an SMLP component file"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("link.smlp: cannot open"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("huge.smlp: not an SMLP component file"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("corrupt.smlp: record 1 holds TPCs 2-3 that another holder holds too"), std::string::npos) << text.out;
    if (is_root()) {
        EXPECT_NE(text.out.find("zero.smlp: is a character device"), std::string::npos) << text.out;
    }

    // --json keeps the label as written (JSON escapes it) and lists every refused file as a problem.
    const Outcome json = gpupart({"smlp", "--json"}, env_for(root), std::nullopt, std::nullopt, 5000);
    ASSERT_FALSE(json.timed_out);
    EXPECT_EQ(json.exit_code, 0) << json.err;
    EXPECT_FALSE(has_escape(json.out));
    EXPECT_NE(json.out.find(R"("label": "\u001b]0;owned\u0007\u001b[2Jlabel")"), std::string::npos) << json.out;
    EXPECT_NE(json.out.find(R"("problems": [)"), std::string::npos);
}

TEST(HostileSmlpFiles, AComponentFileOfAnotherUserInMyDirectoryIsIgnored) {
    if (!is_root()) GTEST_SKIP() << "needs root to make a test user";
    ScratchDir scratch;
    const std::string root = scratch / "registry";
    ::mkdir(root.c_str(), 01777);
    ::chmod(root.c_str(), 01777);
    TestUser mallory("gpupart-smlp-mallory");
    const std::string dir = test::user_dir_in(root);  // root's
    const std::string path = test::write_smlp_file(dir, *test::make_smlp_file(component("planted", "x")));
    ASSERT_EQ(::chown(path.c_str(), mallory.uid, mallory.gid), 0);
    const Outcome out = gpupart({"smlp", "planted"}, env_for(root), std::nullopt, std::nullopt, 5000);
    EXPECT_EQ(out.exit_code, 1) << out.out << out.err;
    EXPECT_NE(out.err.find("no SMLP component 'planted'"), std::string::npos) << out.err;
    const Outcome all = gpupart({"smlp"}, env_for(root), std::nullopt, std::nullopt, 5000);
    EXPECT_NE(all.out.find("planted.smlp: belongs to gpupart-smlp-mallory but lies in the directory of root: ignored"),
              std::string::npos) << all.out;
}

TEST(HostileSmlpFiles, AStreamCountPastTheSlotsEndIsClampedAndSaid) {
    ScratchDir scratch;
    const std::string root = scratch / "registry";
    ::mkdir(root.c_str(), 01777);
    ::chmod(root.c_str(), 01777);
    test::RegisteredChild child(root, "0xff");
    std::string slot;
    for (const RegistryEntry& entry : Registry(root).list())
        if (entry.record && entry.record->pid == child.pid) slot = entry.path;
    {
        test::MappedSlot mapped(slot, true);
        test::FixtureAppMasks masks;
        masks.streams = {{0x1000, TpcMask::range(0, 1), 1}};
        masks.stream_count_override = 0xffffffffu;
        test::write_app_masks(mapped.slot->app, masks);
    }
    const Outcome out = gpupart({"list"}, env_for(root), std::nullopt, std::nullopt, 5000);
    ASSERT_FALSE(out.timed_out);
    EXPECT_EQ(out.exit_code, 0) << out.err;
    EXPECT_NE(out.out.find("problem: the program's mask block says 4294967295 streams, more than the 64 a slot holds"),
              std::string::npos) << out.out;
    const Outcome json = gpupart({"list", "--json"}, env_for(root), std::nullopt, std::nullopt, 5000);
    EXPECT_NE(json.out.find(R"("problem": "the program's mask block says 4294967295 streams)"), std::string::npos) << json.out;
}

}  // namespace gpupart::hostile
