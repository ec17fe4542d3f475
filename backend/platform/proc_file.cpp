#include "platform/proc_file.hpp"

#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

namespace gpupart {

std::optional<std::string> read_proc_file(const std::string& path, std::size_t limit) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string text;
    char buffer[4096];
    while (text.size() < limit) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            ::close(fd);
            return std::nullopt;
        }
        if (got == 0) break;
        text.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(fd);
    if (text.size() > limit) text.resize(limit);
    return text;
}

std::string read_first_line(const std::string& path) {
    std::string text = read_proc_file(path, 64 * 1024).value_or("");
    if (const auto end = text.find('\n'); end != std::string::npos) text.resize(end);
    return text;
}

}  // namespace gpupart
