// Reading /proc files of processes that may exit mid-read (platform/proc_file.hpp).
#include <gtest/gtest.h>

#include <csignal>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/proc_file.hpp"
#include "platform/process_identity.hpp"

namespace {

// A child that waits to be killed; reaped by kill_and_reap.
pid_t start_sleeper() {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::pause();
        ::_exit(0);
    }
    return pid;
}

void kill_and_reap(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
}

}  // namespace

// The failure this file exists for, pinned so a kernel or libstdc++ that stops doing it shows up:
// a cmdline opened while its process lived fails to read once the process is reaped, and
// istreambuf_iterator passes libstdc++'s read error on as an exception.
TEST(ProcFile, ACmdlineReadAfterItsProcessExitedFailsAndIfstreamThrows) {
    const pid_t pid = start_sleeper();
    ASSERT_GT(pid, 0);
    const std::string path = "/proc/" + std::to_string(pid) + "/cmdline";
    const int fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    std::ifstream stream(path, std::ios::binary);
    ASSERT_TRUE(stream.is_open());
    kill_and_reap(pid);

    char byte = 0;
    errno = 0;
    EXPECT_LT(::read(fd, &byte, 1), 0);
    EXPECT_EQ(errno, ESRCH);
    ::close(fd);
    EXPECT_ANY_THROW((std::string{std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()}));
}

TEST(ProcFile, AFileThatOpensButCannotBeReadIsNoValueNotAnException) {
    // A directory opens O_RDONLY and then fails read() with EISDIR: the same shape as ESRCH above.
    std::optional<std::string> text;
    EXPECT_NO_THROW(text = gpupart::read_proc_file(std::filesystem::temp_directory_path().string()));
    EXPECT_FALSE(text.has_value());
    EXPECT_EQ(gpupart::read_first_line(std::filesystem::temp_directory_path().string()), "");
}

TEST(ProcFile, AMissingFileIsNoValue) {
    EXPECT_FALSE(gpupart::read_proc_file("/proc/self/no-such-file").has_value());
    EXPECT_EQ(gpupart::read_first_line("/nonexistent/gpupart/file"), "");
}

TEST(ProcFile, ReadsEveryByteIncludingNulsAndStopsAtTheLimit) {
    const auto own = gpupart::read_proc_file("/proc/self/cmdline");
    ASSERT_TRUE(own.has_value());
    ASSERT_FALSE(own->empty());
    EXPECT_EQ(own->back(), '\0');  // arguments are NUL-terminated, so the last byte is one

    const std::filesystem::path file = std::filesystem::temp_directory_path() / ("gpupart-proc-file-" + std::to_string(::getpid()));
    std::string big(10000, 'x');
    big[5000] = '\0';
    std::ofstream(file, std::ios::binary) << big << "\nsecond line";
    EXPECT_EQ(gpupart::read_proc_file(file.string())->size(), big.size() + 12);
    EXPECT_EQ(gpupart::read_proc_file(file.string(), 100)->size(), 100u);
    EXPECT_EQ(gpupart::read_first_line(file.string()), big);
    std::filesystem::remove(file);
}

TEST(ProcFile, TheCommandOfAProcessIsItsArgumentsAndOfAnExitedOneIsEmpty) {
    EXPECT_NE(gpupart::process_command(::getpid()).find("test_proc_file"), std::string::npos);
    const pid_t pid = start_sleeper();
    ASSERT_GT(pid, 0);
    kill_and_reap(pid);
    EXPECT_EQ(gpupart::process_command(pid), "");
    EXPECT_EQ(gpupart::process_command(-1), "");
}
