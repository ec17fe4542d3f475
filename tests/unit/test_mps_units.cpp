// Which MPS daemon serves a GPU (platform/mps_units.hpp): the per-GPU unit's directories when they exist,
// else the user's CUDA_MPS_PIPE_DIRECTORY or NVIDIA's default; on a directory tree of the test's own
// (no GPU, no systemd, no root).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "model/user_error.hpp"
#include "platform/mps_units.hpp"

using namespace gpupart;

namespace {

constexpr const char* kUuid = "GPU-3fe928d2-98c2-9e0a-599c-a68688ca01ed";

class MpsUnits : public ::testing::Test {
protected:
    void SetUp() override {
        char name[] = "/tmp/gpupart-mpsunits-XXXXXX";
        root_ = ::mkdtemp(name);
        roots_ = MpsUnitRoots{root_ + "/run/gpupart-mps", root_ + "/log/gpupart/mps", ::geteuid()};
        std::filesystem::create_directories(roots_.pipe);
        for (const char* variable : {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"}) ::unsetenv(variable);
    }
    void TearDown() override {
        for (const char* variable : {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"}) ::unsetenv(variable);
        std::filesystem::remove_all(root_);
    }
    // What systemd's RuntimeDirectory= makes for the unit: mode 0755, owned by the unit's user.
    std::string make_unit_pipe(const std::string& uuid, mode_t mode = 0755) const {
        const std::string pipe = roots_.pipe + "/" + uuid;
        EXPECT_EQ(::mkdir(pipe.c_str(), mode), 0);
        EXPECT_EQ(::chmod(pipe.c_str(), mode), 0);  // mkdir's mode goes through the umask
        return pipe;
    }
    std::string root_;
    MpsUnitRoots roots_;
};

}  // namespace

TEST_F(MpsUnits, WithoutAUnitTheDefaultDaemon) {
    const MpsDirectories dirs = mps_directories(kUuid, roots_);
    EXPECT_EQ(dirs.pipe, "/tmp/nvidia-mps");
    EXPECT_EQ(dirs.log, "/tmp/nvidia-mps-log");
    EXPECT_EQ(dirs.unit, "");
}

TEST_F(MpsUnits, TheUnitOfThisGpu) {
    const std::string pipe = make_unit_pipe(kUuid);
    const MpsDirectories dirs = mps_directories(kUuid, roots_);
    EXPECT_EQ(dirs.pipe, pipe);
    EXPECT_EQ(dirs.log, roots_.log + "/" + kUuid);
    EXPECT_EQ(dirs.unit, "gpupart-mps@GPU-3fe928d2-98c2-9e0a-599c-a68688ca01ed.service");
    // Another GPU has no unit: the default daemon, not this GPU's.
    EXPECT_EQ(mps_directories("GPU-00000000-0000-0000-0000-000000000000", roots_).unit, "");
    // Not known: no unit can be picked.
    EXPECT_EQ(mps_directories("", roots_).pipe, "/tmp/nvidia-mps");
}

TEST_F(MpsUnits, AUsersOwnPipeDirectoryWins) {
    make_unit_pipe(kUuid);
    ::setenv("CUDA_MPS_PIPE_DIRECTORY", "/home/alice/mps", 1);
    ::setenv("CUDA_MPS_LOG_DIRECTORY", "/home/alice/mps-log", 1);
    const MpsDirectories dirs = mps_directories(kUuid, roots_);
    EXPECT_EQ(dirs.pipe, "/home/alice/mps");
    EXPECT_EQ(dirs.log, "/home/alice/mps-log");
    EXPECT_EQ(dirs.unit, "");
    EXPECT_TRUE(mps_unit_status(roots_).empty());  // one daemon for every GPU, as the user chose
    ::unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    EXPECT_EQ(mps_directories(kUuid, roots_).log, "/home/alice/mps-log");  // the unit's pipe, the user's logs
}

TEST_F(MpsUnits, AnUntrustedPipeDirectoryIsRefusedInOneLine) {
    make_unit_pipe(kUuid, 0777);
    try {
        mps_directories(kUuid, roots_);
        FAIL() << "a world-writable pipe directory was used";
    } catch (const UserError& error) {
        const std::string what = error.what();
        EXPECT_NE(what.find("writable by others"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos);
    }
    // Owned by somebody else (here: the test's user is not the trusted owner).
    MpsUnitRoots others = roots_;
    others.owner = roots_.owner + 1;
    ASSERT_EQ(::chmod((roots_.pipe + "/" + kUuid).c_str(), 0755), 0);
    EXPECT_THROW(mps_directories(kUuid, others), UserError);
    // A symlink to a directory is not followed, a file is no directory.
    const std::string other = "GPU-11111111-0000-0000-0000-000000000000";
    ASSERT_EQ(::symlink(root_.c_str(), (roots_.pipe + "/" + other).c_str()), 0);
    EXPECT_THROW(mps_directories(other, roots_), UserError);
}

TEST_F(MpsUnits, ANameThatIsNoUuidNeverShapesAPath) {
    ASSERT_EQ(::mkdir((roots_.pipe + "/x").c_str(), 0755), 0);
    for (const std::string uuid : {"..", ".", "../x", "GPU-1/../../x", "-x", "GPU 1"})
        EXPECT_EQ(mps_directories(uuid, roots_).pipe, "/tmp/nvidia-mps") << uuid;
}

TEST_F(MpsUnits, ListsTheUnitsAndSaysWhyOneIsNotUsed) {
    make_unit_pipe("GPU-b");
    make_unit_pipe("GPU-a");
    make_unit_pipe("GPU-c", 0777);
    ASSERT_EQ(::mkdir((roots_.pipe + "/.hidden").c_str(), 0755), 0);
    EXPECT_EQ(mps_unit_gpus(roots_), (std::vector<std::string>{"GPU-a", "GPU-b", "GPU-c"}));
    // No daemon answers in these directories (no control socket): not running, each with its own reason.
    const std::vector<MpsUnitStatus> units = mps_unit_status(roots_);
    ASSERT_EQ(units.size(), 3u);
    EXPECT_EQ(units[0].unit, "gpupart-mps@GPU-a.service");
    EXPECT_FALSE(units[0].state.control_running);
    EXPECT_NE(units[0].state.detail.find("no control socket " + roots_.pipe + "/GPU-a/control"), std::string::npos)
        << units[0].state.detail;
    EXPECT_NE(units[2].state.detail.find("writable by others"), std::string::npos) << units[2].state.detail;
    EXPECT_TRUE(mps_unit_gpus(MpsUnitRoots{root_ + "/missing", roots_.log, roots_.owner}).empty());
}
