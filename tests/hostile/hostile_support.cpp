#include "hostile_support.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gpupart::hostile {

ScratchDir::ScratchDir() {
    char name[] = "/tmp/gpupart-hostile-XXXXXX";
    if (::mkdtemp(name) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = name;
    ::chmod(path.c_str(), 0755);
}

ScratchDir::~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
}

bool is_root() { return ::geteuid() == 0; }

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

TestUser::TestUser(const std::string& user_name, const std::string& group) : name(user_name) {
    std::vector<std::string> argv = {"useradd", "--no-create-home", "--shell", "/usr/sbin/nologin"};
    if (!group.empty()) argv.insert(argv.end(), {"--no-user-group", "--gid", group});
    argv.push_back(name);
    run({"userdel", name});  // a user left behind by a killed earlier run
    const Outcome added = run(argv);
    if (added.exit_code != 0) throw std::runtime_error("useradd " + name + " failed: " + added.err);
    const passwd* entry = ::getpwnam(name.c_str());
    if (entry == nullptr) throw std::runtime_error("useradd made no passwd entry for " + name);
    uid = entry->pw_uid;
    gid = entry->pw_gid;
}

TestUser::~TestUser() { run({"userdel", name}); }

pid_t start_worker_as(const TestUser& user, const std::vector<std::string>& env, const std::string& name) {
    const std::string shown = name.empty() ? user.name : name;
    const pid_t worker = ::fork();
    if (worker == 0) {
        for (const auto& entry : env) ::putenv(const_cast<char*>(entry.c_str()));
        if (::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) ::_exit(125);
        ::execl(GPUPART_DEMO_WORKER, GPUPART_DEMO_WORKER, shown.c_str(), "0xf", "0xff", "60", "50", nullptr);
        ::_exit(127);
    }
    return worker;
}

namespace {
std::string drain(int fd) {
    std::string text;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
    return text;
}
}  // namespace

Outcome run(const std::vector<std::string>& argv, const std::vector<std::string>& env, std::optional<uid_t> user,
            std::optional<gid_t> group, int timeout_ms) {
    char out_name[] = "/tmp/gpupart-hostile-out-XXXXXX";
    char err_name[] = "/tmp/gpupart-hostile-err-XXXXXX";
    const int out_fd = ::mkstemp(out_name);
    const int err_fd = ::mkstemp(err_name);
    ::unlink(out_name);
    ::unlink(err_name);
    const pid_t child = ::fork();
    if (child == 0) {
        ::setpgid(0, 0);
        const int null_fd = ::open("/dev/null", O_RDONLY);
        ::dup2(null_fd, 0);
        ::dup2(out_fd, 1);
        ::dup2(err_fd, 2);
        for (const auto& entry : env) ::putenv(const_cast<char*>(entry.c_str()));
        if (group && (::setgroups(0, nullptr) != 0 || ::setgid(*group) != 0)) ::_exit(125);
        if (user && ::setuid(*user) != 0) ::_exit(125);
        std::vector<char*> args;
        for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    Outcome outcome;
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (::waitpid(child, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            outcome.timed_out = true;
            ::kill(-child, SIGKILL);
            ::kill(child, SIGKILL);
            ::waitpid(child, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
    ::lseek(out_fd, 0, SEEK_SET);
    ::lseek(err_fd, 0, SEEK_SET);
    outcome.out = drain(out_fd);
    outcome.err = drain(err_fd);
    ::close(out_fd);
    ::close(err_fd);
    return outcome;
}

Outcome gpupart(const std::vector<std::string>& args, const std::vector<std::string>& env, std::optional<uid_t> user,
                std::optional<gid_t> group, int timeout_ms) {
    std::vector<std::string> argv = {GPUPART_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, env, user, group, timeout_ms);
}

}  // namespace gpupart::hostile
