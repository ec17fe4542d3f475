#include "platform/mps_control.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/mps_directories_check.hpp"
#include "platform/mps_log.hpp"
#include "platform/proc_file.hpp"

extern char** environ;

namespace gpupart {
namespace {

constexpr const char* kControl = "nvidia-cuda-mps-control";

// This process's environment with CUDA_MPS_PIPE_DIRECTORY set to `pipe`: the control program talks to the
// daemon of that directory, whatever this process was started with.
std::vector<std::string> environment_for(const std::string& pipe) {
    std::vector<std::string> environment;
    for (char** variable = environ; *variable != nullptr; ++variable)
        if (std::strncmp(*variable, "CUDA_MPS_PIPE_DIRECTORY=", 24) != 0) environment.emplace_back(*variable);
    environment.push_back("CUDA_MPS_PIPE_DIRECTORY=" + pipe);
    return environment;
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const std::string& input, int timeout_ms) {
    std::vector<std::string> environment;
    for (char** variable = environ; *variable != nullptr; ++variable) environment.emplace_back(*variable);
    return run_command(argv, input, timeout_ms, environment);
}

CommandResult run_command(const std::vector<std::string>& argv, const std::string& input, int timeout_ms,
                          const std::vector<std::string>& environment) {
    int to_child[2];
    int from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0) throw UserError(fmt::format("pipe: {}", std::strerror(errno)));
    if (::pipe2(from_child, O_CLOEXEC) != 0) {
        ::close(to_child[0]);
        ::close(to_child[1]);
        throw UserError(fmt::format("pipe: {}", std::strerror(errno)));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 2);
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& variable : environment) envp.push_back(const_cast<char*>(variable.c_str()));
    envp.push_back(nullptr);
    pid_t pid = 0;
    const int error = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    if (error != 0) {
        ::close(to_child[1]);
        ::close(from_child[0]);
        throw UserError(fmt::format("cannot run {}: {}", argv[0], std::strerror(error)));
    }
    // All of the input (a snapshot for gpupart-render is larger than a pipe's buffer); a child that
    // stops reading ends the loop, its exit status then says why. A child that exits before reading
    // (nvidia-cuda-mps-control does when no daemon runs) makes the write fail with EPIPE and raise
    // SIGPIPE, whose default action would kill this process without a word (measured on an H200: one
    // `gpupart list` in ~600 died so while the MPS daemon was stopped). SIGPIPE is blocked in this
    // thread for the writes, and one it raised is taken before the old mask comes back.
    sigset_t pipe_only, old_mask;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);
    bool broken_pipe = false;
    for (std::size_t written = 0; written < input.size();) {
        const ssize_t n = ::write(to_child[1], input.data() + written, input.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EPIPE) broken_pipe = true;
        if (n <= 0) break;
        written += static_cast<std::size_t>(n);
    }
    ::close(to_child[1]);
    if (broken_pipe && !sigismember(&old_mask, SIGPIPE)) {
        const timespec now{0, 0};
        while (::sigtimedwait(&pipe_only, nullptr, &now) == SIGPIPE) {
        }
    }
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    CommandResult result;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    char buffer[4096];
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
            ::close(from_child[0]);
            throw UserError(fmt::format("{} did not answer within {} s", argv[0], timeout_ms / 1000));
        }
        pollfd wait_for{from_child[0], POLLIN, 0};
        if (::poll(&wait_for, 1, static_cast<int>(left)) <= 0) continue;
        const ssize_t n = ::read(from_child[0], buffer, sizeof buffer);
        if (n <= 0) break;
        result.output.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(from_child[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

bool mps_static_partitioning_active(const std::string& proc_root) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(proc_root, error)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string cmdline = read_proc_file((entry.path() / "cmdline").string()).value_or("");
        std::vector<std::string> args;
        std::size_t start = 0;
        for (std::size_t i = 0; i <= cmdline.size(); ++i)
            if (i == cmdline.size() || cmdline[i] == '\0') {
                if (i > start) args.emplace_back(cmdline.substr(start, i - start));
                start = i + 1;
            }
        if (args.empty() || std::filesystem::path(args[0]).filename() != kControl) continue;
        for (const auto& arg : args)
            if (arg == "-S" || arg == "--static-partitioning") return true;
    }
    return false;
}

std::string mps_pipe_directory() {
    const char* dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
    return dir != nullptr && dir[0] != '\0' ? dir : "/tmp/nvidia-mps";
}

MpsState mps_status() { return mps_status(mps_pipe_directory()); }

namespace {

// Whether a daemon runs with -S, found by reading every /proc/PID/cmdline: the largest part of a refresh of
// the app and of `gpupart top` (about 0.45% of a core at 4 Hz, measured with tests/bench/gui_cpu.sh). The
// answer changes only when someone restarts the MPS daemon, so it is kept for a few seconds.
bool static_partitioning_seen_lately() {
    constexpr auto kKeep = std::chrono::seconds(5);
    static std::mutex lock;
    static std::optional<std::chrono::steady_clock::time_point> when;
    static bool seen = false;
    const std::lock_guard<std::mutex> guard(lock);
    const auto now = std::chrono::steady_clock::now();
    if (!when || now - *when >= kKeep) {
        seen = mps_static_partitioning_active();
        when = now;
    }
    return seen;
}

}  // namespace

MpsState mps_status(const std::string& pipe_directory) {
    MpsState state;
    state.pipe_directory = pipe_directory;
    state.static_partitioning = static_partitioning_seen_lately();
    const std::string socket = state.pipe_directory + "/control";
    std::error_code unreadable;  // a pipe directory this user may not search reads as "not running", with why
    if (!std::filesystem::exists(socket, unreadable)) {
        state.detail = unreadable ? fmt::format("not known (control socket {}: {})", socket, unreadable.message())
                                  : fmt::format("not running (no control socket {})", socket);
        return state;
    }
    CommandResult result;
    try {
        result = run_command({kControl}, "get_server_list\n", 10000, environment_for(state.pipe_directory));
    } catch (const UserError& error) {
        state.detail = fmt::format("control socket {} exists but the daemon did not answer: {}", socket, error.what());
        return state;
    }
    if (result.exit_code != 0) {
        state.detail = fmt::format("control socket {} exists but {} failed: {}", socket, kControl, result.output);
        return state;
    }
    state.control_running = true;
    std::istringstream lines(result.output);
    for (int pid; lines >> pid;) state.server_pids.push_back(pid);
    state.detail = state.server_pids.empty() ? fmt::format("running (pipe directory {}; no server yet: it starts with the first client)", state.pipe_directory)
                                             : fmt::format("running (pipe directory {}; server pid {})", state.pipe_directory,
                                                           fmt::join(state.server_pids, ", "));
    return state;
}

std::string mps_start() {
    const MpsState before = mps_status();
    if (before.control_running) return "MPS is already " + before.detail;
    const std::string pipe = mps_pipe_directory();
    const std::string log = mps_log_directory();  // where gpupart looks for fatal errors (mps_log.hpp)
    // The daemon runs as us with these: a directory another user made first (NVIDIA's defaults are in /tmp)
    // would let them replace its control socket or its logs.
    prepare_mps_directory(pipe, "pipe");
    prepare_mps_directory(log, "log");
    std::error_code ignored;
    ::setenv("CUDA_MPS_PIPE_DIRECTORY", pipe.c_str(), 1);
    ::setenv("CUDA_MPS_LOG_DIRECTORY", log.c_str(), 1);
    const CommandResult result = run_command({kControl, "-d"}, "", 20000);
    if (result.exit_code != 0)
        throw UserError(fmt::format("{} -d failed (exit {}): {}", kControl, result.exit_code, result.output));
    for (int i = 0; i < 50; ++i) {  // the daemon creates its socket shortly after forking
        if (std::filesystem::exists(pipe + "/control", ignored)) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const MpsState after = mps_status();
    if (!after.control_running) throw UserError("MPS control daemon started but does not answer: " + after.detail);
    return fmt::format("MPS started: pipe directory {}, logs {}. Clients must use the same CUDA_MPS_PIPE_DIRECTORY.", pipe, log);
}

std::map<int, std::vector<int>> mps_clients(const MpsState& state) {
    std::map<int, std::vector<int>> clients;
    if (!state.control_running) return clients;
    for (int server : state.server_pids) {
        const CommandResult result = run_command({kControl}, fmt::format("get_client_list {}\n", server), 10000,
                                                 environment_for(state.pipe_directory));
        if (result.exit_code != 0)
            throw UserError(fmt::format("{} get_client_list {} failed: {}", kControl, server, result.output));
        std::vector<int>& pids = clients[server];
        std::istringstream lines(result.output);
        for (int pid; lines >> pid;) pids.push_back(pid);
    }
    return clients;
}

std::string mps_stop() {
    const MpsState before = mps_status();
    if (!before.control_running) return "MPS is " + before.detail;
    const CommandResult result = run_command({kControl}, "quit\n", 20000);
    if (result.exit_code != 0) throw UserError(fmt::format("{} quit failed: {}", kControl, result.output));
    return "MPS stopped";
}

}  // namespace gpupart
