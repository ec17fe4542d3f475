#include "smlp_test_support.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "registry_slot.h"
#include "smlp_component_file.h"

namespace gpupart::smlp_test {

void low_bits(uint32_t count, uint32_t out[4]) {
    for (uint32_t w = 0; w < 4; ++w) {
        const uint32_t in_word = count > 32 * w ? count - 32 * w : 0;
        out[w] = in_word >= 32 ? 0xffffffffu : (1u << in_word) - 1u;
    }
}

uint32_t popcount(const uint32_t words[4]) {
    return static_cast<uint32_t>(__builtin_popcount(words[0]) + __builtin_popcount(words[1]) +
                                 __builtin_popcount(words[2]) + __builtin_popcount(words[3]));
}

std::unique_ptr<gpupart_smlp_file> make_component(uint32_t tpc_count, uint32_t h, uint32_t fq_length,
                                                  const std::vector<std::vector<uint32_t>>& gpcs) {
    gpupart_smlp_shape shape{};
    low_bits(tpc_count, shape.tpcs);
    shape.h = h;
    shape.fq_length = fq_length;
    shape.gpc_count = static_cast<uint32_t>(gpcs.size());
    for (size_t g = 0; g < gpcs.size(); ++g)
        for (uint32_t bit : gpcs[g]) shape.gpc_tpcs[g][bit / 32] |= 1u << (bit % 32);
    auto file = std::make_unique<gpupart_smlp_file>();
    char why[200] = "";
    if (gpupart_smlp_core_init(file.get(), "test", &shape, 1000, 1, why, sizeof why) != 0)
        throw std::runtime_error(std::string("core_init: ") + why);
    return file;
}

int issue(gpupart_smlp_file& file, int pid, int32_t priority, const std::vector<uint32_t>& levels, uint64_t now,
          uint32_t tolerance_ppm) {
    const gpupart_smlp_issue request{pid,          1,  pid, priority, levels.data(), static_cast<uint32_t>(levels.size()),
                                     tolerance_ppm, "test"};
    return gpupart_smlp_core_issue(&file, &request, now);
}

std::vector<uint32_t> step_levels(uint32_t longest, uint32_t parallelism, uint32_t h, uint32_t tpc_count) {
    std::vector<uint32_t> levels;
    // L(j) = Lmax/rho * max(ceil((rho-j+1)/j), 1), and ceil((rho-j+1)/j) = floor(rho/j).
    for (uint32_t j = h; j <= tpc_count; j += h)
        levels.push_back(static_cast<uint32_t>(uint64_t{longest} * std::max(parallelism / j, 1u) / parallelism));
    return levels;
}

TempRegistry::TempRegistry() {
    char name[] = "/tmp/gpupart-smlp-test-XXXXXX";
    if (::mkdtemp(name) == nullptr) throw std::runtime_error("mkdtemp failed");
    root = name;
    std::filesystem::permissions(root, std::filesystem::perms(01777));
    if (const char* previous = std::getenv("GPUPART_REGISTRY_DIR")) {
        previous_ = previous;
        had_previous_ = true;
    }
    ::setenv("GPUPART_REGISTRY_DIR", root.c_str(), 1);
}

TempRegistry::~TempRegistry() {
    if (had_previous_) ::setenv("GPUPART_REGISTRY_DIR", previous_.c_str(), 1);
    else ::unsetenv("GPUPART_REGISTRY_DIR");
    std::error_code ignored;
    std::filesystem::remove_all(root, ignored);
}

std::string TempRegistry::user_dir() const {
    char dir[512];
    if (gpupart_user_dir(root.c_str(), ::geteuid(), 1, dir, sizeof dir) != 0) throw std::runtime_error("no user dir");
    return dir;
}

gpupart_smlp_config config_of(uint32_t tpc_count, uint32_t h, uint32_t fq_length) {
    gpupart_smlp_config config{};
    low_bits(tpc_count, config.tpcs);
    config.h = h;
    config.fq_length = fq_length;
    return config;
}

pid_t spawn(const std::function<int()>& body) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        int status = 99;
        try {
            status = body();
        } catch (...) {
        }
        ::_exit(status);
    }
    return pid;
}

int wait_child(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

gpupart_smlp_file read_component(const std::string& path) {
    gpupart_smlp_file copy{};
    char why[300] = "";
    const int fd = gpupart_smlp_file_open(path.c_str(), 0, ::geteuid(), 0, why, sizeof why);
    EXPECT_GE(fd, 0) << why;
    if (fd < 0) return copy;
    const int error = gpupart_smlp_file_read(fd, &copy, 1000, why, sizeof why);
    ::close(fd);
    EXPECT_EQ(error, 0) << why;
    return copy;
}

bool one_line(const char* message) {
    return message != nullptr && message[0] != '\0' && std::strchr(message, '\n') == nullptr;
}

bool eventually(const std::function<bool()>& condition, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!condition()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

Pipe::Pipe() {
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
}

Pipe::~Pipe() {
    ::close(fds[0]);
    ::close(fds[1]);
}

void Pipe::send(int64_t value) const {
    if (::write(fds[1], &value, sizeof value) != static_cast<ssize_t>(sizeof value)) throw std::runtime_error("pipe write");
}

int64_t Pipe::receive() const {
    int64_t value = 0;
    size_t got = 0;
    while (got < sizeof value) {
        // Both ends are open in the test itself: a child that died without writing must not hang it.
        pollfd ready{fds[0], POLLIN, 0};
        const int polled = ::poll(&ready, 1, 60000);
        if (polled < 0 && errno == EINTR) continue;
        if (polled <= 0) return -1;
        const ssize_t n = ::read(fds[0], reinterpret_cast<char*>(&value) + got, sizeof value - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += static_cast<size_t>(n);
    }
    return value;
}

}  // namespace gpupart::smlp_test
