// run_command (backend/platform/mps_control.hpp): the way gpupart talks to nvidia-cuda-mps-control, the
// probe and the renderer, with real child processes.
#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "platform/mps_control.hpp"

namespace gpupart {
namespace {

// A child that exits without reading its input (nvidia-cuda-mps-control does when no daemon runs): the
// input, larger than a pipe's buffer, cannot all be written, and the write fails with EPIPE. With
// SIGPIPE's default action that killed the whole gpupart, silently (seen on an H200 as a `gpupart list`
// dying with no message). The caller must get the child's exit status instead, and SIGPIPE must not stay
// pending or blocked.
TEST(RunCommand, ChildThatExitsWithoutReadingDoesNotKillTheCaller) {
    const std::string input(4 << 20, 'x');
    for (int i = 0; i < 20; ++i) {
        const CommandResult result = run_command({"sh", "-c", "exit 3"}, input, 10000);
        EXPECT_EQ(result.exit_code, 3);
    }
    sigset_t pending, blocked;
    sigpending(&pending);
    EXPECT_FALSE(sigismember(&pending, SIGPIPE));
    pthread_sigmask(SIG_SETMASK, nullptr, &blocked);
    EXPECT_FALSE(sigismember(&blocked, SIGPIPE));
}

// A SIGPIPE the caller already blocks stays its own: run_command takes only one it raised itself, and
// leaves the caller's mask as it was.
TEST(RunCommand, KeepsTheCallersBlockedSigpipe) {
    sigset_t pipe_only, old_mask, now;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);
    const CommandResult result = run_command({"sh", "-c", "exit 4"}, std::string(4 << 20, 'y'), 10000);
    EXPECT_EQ(result.exit_code, 4);
    pthread_sigmask(SIG_SETMASK, nullptr, &now);
    EXPECT_TRUE(sigismember(&now, SIGPIPE));
    // Drop what the write raised, so that restoring the mask does not kill the test.
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
}

TEST(RunCommand, PassesInputAndReturnsOutput) {
    const CommandResult result = run_command({"sh", "-c", "tr a-z A-Z"}, "get_server_list\n", 10000);
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.output, "GET_SERVER_LIST\n");
}

}  // namespace
}  // namespace gpupart
