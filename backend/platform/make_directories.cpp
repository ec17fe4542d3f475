#include "platform/make_directories.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <sys/stat.h>

#include "model/user_error.hpp"

namespace gpupart {

void make_directories(const std::string& dir, mode_t mode, const std::string& what) {
    for (std::size_t at = dir.find('/', 1);; at = dir.find('/', at + 1)) {
        const std::string prefix = dir.substr(0, at);
        if (!prefix.empty() && ::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST)
            throw UserError(one_line(fmt::format("{} {}: cannot create {}: {}", what, dir, prefix, std::strerror(errno))));
        if (at == std::string::npos) break;
    }
    struct stat info {};
    if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
        throw UserError(one_line(fmt::format("{} {}: not a directory", what, dir)));
}

}  // namespace gpupart
