// MPS directories another user made first: NVIDIA's defaults (/tmp/nvidia-mps, /tmp/nvidia-mps-log) are
// in /tmp, where any user can make the names before root runs `gpupart mps start` (or `slurm place`, which
// starts MPS when none runs). The daemon then ran as root with pipe and log directories the attacker owned:
// the attacker could replace its control socket. Now they are checked as the per-GPU units' are, and the
// start is refused in one line before anything runs. The directories are chosen here through
// CUDA_MPS_PIPE_DIRECTORY / CUDA_MPS_LOG_DIRECTORY (the same path through gpupart as the defaults), never
// the machine's /tmp ones. No GPU here: nvidia-cuda-mps-control is a script on PATH that records that it
// was started, the only way to see whether gpupart would have started the daemon.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

#include "hostile_support.hpp"

namespace gpupart::hostile {
namespace {

struct MpsScene {
    explicit MpsScene(const ScratchDir& scratch) : bin(scratch / "bin"), started(scratch / "started") {
        std::filesystem::create_directory(bin);
        const std::string control = bin + "/nvidia-cuda-mps-control";
        std::ofstream(control) << "#!/bin/sh\n"
                                  "echo \"$*\" >> '" << started << "'\n"
                                  "[ \"$1\" = -d ] && : > \"$CUDA_MPS_PIPE_DIRECTORY/control\"\n"
                                  "cat > /dev/null\n";
        std::filesystem::permissions(control, std::filesystem::perms(0755));
    }
    Outcome start(const std::string& pipe, const std::string& log) const {
        const char* path = std::getenv("PATH");
        return gpupart({"mps", "start"}, {"PATH=" + bin + ":" + (path ? path : "/usr/bin:/bin"),
                                          "CUDA_MPS_PIPE_DIRECTORY=" + pipe, "CUDA_MPS_LOG_DIRECTORY=" + log});
    }
    bool daemon_started() const { return slurp(started).find("-d") != std::string::npos; }
    std::string bin;
    std::string started;
};

void make_as(const std::string& path, const TestUser& user) {
    ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
    ASSERT_EQ(::chown(path.c_str(), user.uid, user.gid), 0);
}

TEST(HostileMpsDirs, PipeOrLogDirectoryMadeFirstByAnotherUserIsRefusedBeforeTheDaemonStarts) {
    if (!is_root()) GTEST_SKIP() << "needs root to make a test user";
    ScratchDir scratch;
    TestUser attacker("gpattacker");
    MpsScene scene(scratch);
    make_as(scratch / "nvidia-mps", attacker);
    make_as(scratch / "nvidia-mps-log", attacker);
    Outcome outcome = scene.start(scratch / "nvidia-mps", scratch / "nvidia-mps-log");
    EXPECT_EQ(outcome.exit_code, 1) << outcome.out << outcome.err;
    EXPECT_NE(outcome.err.find(scratch / "nvidia-mps: owned by uid " + std::to_string(attacker.uid)), std::string::npos)
        << outcome.err;
    EXPECT_NE(outcome.err.find("MPS not started"), std::string::npos) << outcome.err;
    EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << "one line: " << outcome.err;
    EXPECT_FALSE(scene.daemon_started());

    // Only the log directory is the attacker's: refused too (the daemon would write its logs through it).
    const std::string own_pipe = scratch / "own-pipe";
    outcome = scene.start(own_pipe, scratch / "nvidia-mps-log");
    EXPECT_EQ(outcome.exit_code, 1) << outcome.out << outcome.err;
    EXPECT_NE(outcome.err.find("nvidia-mps-log: owned by uid"), std::string::npos) << outcome.err;
    EXPECT_FALSE(scene.daemon_started());

    // A directory of root's that others may write, and a symlink to root's own: refused.
    const std::string open_log = scratch / "open-log";
    ASSERT_EQ(::mkdir(open_log.c_str(), 0777), 0);
    ASSERT_EQ(::chmod(open_log.c_str(), 0777), 0);
    outcome = scene.start(own_pipe, open_log);
    EXPECT_NE(outcome.err.find("writable by others"), std::string::npos) << outcome.err;
    const std::string linked = scratch / "linked-pipe";
    ASSERT_EQ(::symlink(own_pipe.c_str(), linked.c_str()), 0);
    outcome = scene.start(linked, scratch / "own-log");
    EXPECT_NE(outcome.err.find("is a symbolic link"), std::string::npos) << outcome.err;
    EXPECT_FALSE(scene.daemon_started());

    // Root's own directories (made by gpupart, 0755 whatever the umask): the daemon starts.
    outcome = scene.start(own_pipe, scratch / "own-log");
    EXPECT_EQ(outcome.exit_code, 0) << outcome.out << outcome.err;
    EXPECT_TRUE(scene.daemon_started());
    struct stat info {};
    ASSERT_EQ(::stat((scratch / "own-log").c_str(), &info), 0);
    EXPECT_EQ(info.st_uid, 0u);
    EXPECT_EQ(info.st_mode & 0777, 0755u);
}

}  // namespace
}  // namespace gpupart::hostile
