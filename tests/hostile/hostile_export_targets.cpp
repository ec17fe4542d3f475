// Hostile files, writes through other people's files. `gpupart export` once replaced a device node
// named as its target with a regular file (it destroyed a machine's /dev/full), and wrote through a
// symlink another user planted at its predictable temporary name `X.tmp.<pid>`. Now every writer
// (export --json/--png/--svg, snapshots, profiles, the probe cache) goes through replace_file: a
// non-regular target is refused and left as it was, the temporary name is random and made with O_EXCL,
// and the old content survives a failed write.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hostile_support.hpp"

namespace gpupart::hostile {
namespace {

const std::string kVictimText = "the victim's own content\n";

int line_count(const std::string& text) {
    int lines = 0;
    for (char c : text) lines += c == '\n';
    return lines;
}

// The export options this build can write: PNG and SVG need gpupart-render (the Qt build).
std::vector<std::string> export_options() {
    std::vector<std::string> options = {"--json"};
    const std::filesystem::path dir = std::filesystem::path(GPUPART_CLI_PATH).parent_path();
    if (std::filesystem::exists(dir / "gpupart-render") || std::filesystem::exists(dir / "render" / "gpupart-render")) {
        options.push_back("--png");
        options.push_back("--svg");
    }
    return options;
}

Outcome export_to(const std::string& option, const std::string& target) {
    return gpupart({"export", "--snapshot", "builtin:h200", option, target}, {}, std::nullopt, std::nullopt, 60000);
}

TEST(HostileExportTargets, DeviceNodeTargetIsRefusedAndLeftAsItWas) {
    if (!is_root()) GTEST_SKIP() << "mknod needs root";
    ScratchDir scratch;
    const std::string full = scratch / "full";  // a copy of /dev/full, made here: never the machine's own
    ASSERT_EQ(::mknod(full.c_str(), S_IFCHR | 0666, ::makedev(1, 7)), 0);
    for (const std::string& option : export_options()) {
        const Outcome outcome = export_to(option, full);
        ASSERT_FALSE(outcome.timed_out);
        EXPECT_EQ(outcome.exit_code, 1) << option << ":\n" << outcome.err;
        EXPECT_EQ(line_count(outcome.err), 1) << option << ":\n" << outcome.err;
        EXPECT_NE(outcome.err.find(full + ": is a character device"), std::string::npos) << option << ":\n" << outcome.err;
        struct stat info {};
        ASSERT_EQ(::lstat(full.c_str(), &info), 0);
        EXPECT_TRUE(S_ISCHR(info.st_mode)) << option << " replaced the device node";
        EXPECT_EQ(info.st_rdev, ::makedev(1, 7));
    }
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(scratch.path), std::filesystem::directory_iterator()), 1)
        << "no temporary file is left behind";
}

TEST(HostileExportTargets, FifoAndSymlinkTargetsAreRefusedAndNothingIsWrittenThroughThem) {
    ScratchDir scratch;
    const std::string fifo = scratch / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
    const std::string victim = scratch / "victim";
    std::ofstream(victim) << kVictimText;
    const std::string link = scratch / "link.json";
    ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
    for (const std::string& option : export_options()) {
        for (const auto& [target, kind] : {std::pair{fifo, "is a FIFO"}, std::pair{link, "is a symbolic link"}}) {
            const Outcome outcome = export_to(option, target);
            ASSERT_FALSE(outcome.timed_out) << option << " " << target;
            EXPECT_EQ(outcome.exit_code, 1) << option << " " << target << ":\n" << outcome.err;
            EXPECT_EQ(line_count(outcome.err), 1) << outcome.err;
            EXPECT_NE(outcome.err.find(target + ": " + kind), std::string::npos) << outcome.err;
        }
        struct stat info {};
        ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
        EXPECT_TRUE(S_ISFIFO(info.st_mode));
        ASSERT_EQ(::lstat(link.c_str(), &info), 0);
        EXPECT_TRUE(S_ISLNK(info.st_mode));
        EXPECT_EQ(slurp(victim), kVictimText);
    }
}

// The old writers used `X.tmp.<pid>`: a shell plants a symlink at exactly that name for its own pid,
// then execs gpupart, which keeps the pid. The symlink's target must stay untouched.
TEST(HostileExportTargets, SymlinkPlantedAtTheOldTemporaryNameIsNeverFollowed) {
    ScratchDir scratch;
    const std::string victim = scratch / "victim";
    for (const std::string& option : export_options()) {
        std::ofstream(victim, std::ios::trunc) << kVictimText;
        const std::string target = scratch / ("out" + option.substr(1));
        const std::string script = "ln -s \"$1\" \"$2.tmp.$$\" && exec \"$3\" export --snapshot builtin:h200 \"$4\" \"$2\"";
        const Outcome outcome = run({"/bin/sh", "-c", script, "sh", victim, target, GPUPART_CLI_PATH, option}, {},
                                    std::nullopt, std::nullopt, 60000);
        ASSERT_FALSE(outcome.timed_out);
        EXPECT_EQ(outcome.exit_code, 0) << option << ":\n" << outcome.err;
        EXPECT_EQ(slurp(victim), kVictimText) << option << " wrote through the planted symlink";
        struct stat info {};
        ASSERT_EQ(::lstat(target.c_str(), &info), 0);
        EXPECT_TRUE(S_ISREG(info.st_mode)) << option;
        EXPECT_GT(info.st_size, 100) << option;
    }
}

// A write that fails (here: the file size limit, as on a full disk) leaves the old file whole and no
// temporary behind.
TEST(HostileExportTargets, TheOldContentSurvivesAFailedWrite) {
    ScratchDir scratch;
    for (const std::string& option : export_options()) {
        const std::string target = scratch / ("old" + option.substr(1));
        std::ofstream(target, std::ios::trunc) << kVictimText;
        // SIGXFSZ ignored (inherited through exec): write(2) then fails with EFBIG instead of killing.
        const std::string script = "trap '' XFSZ; ulimit -f 8 && exec \"$1\" export --snapshot builtin:h200 \"$2\" \"$3\"";
        const Outcome outcome = run({"/bin/sh", "-c", script, "sh", GPUPART_CLI_PATH, option, target}, {}, std::nullopt,
                                    std::nullopt, 60000);
        ASSERT_FALSE(outcome.timed_out);
        EXPECT_EQ(outcome.exit_code, 1) << option << ":\n" << outcome.err;
        EXPECT_EQ(line_count(outcome.err), 1) << outcome.err;
        EXPECT_NE(outcome.err.find(target + ": "), std::string::npos) << outcome.err;
        EXPECT_EQ(slurp(target), kVictimText) << option;
    }
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(scratch.path), std::filesystem::directory_iterator()),
              static_cast<long>(export_options().size()))
        << "no temporary file is left behind";
}

}  // namespace
}  // namespace gpupart::hostile
