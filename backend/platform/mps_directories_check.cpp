#include "platform/mps_directories_check.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/safe_file.hpp"
#include "platform/user_names.hpp"

namespace gpupart {

std::optional<std::string> mps_directory_problem(const std::string& path, uid_t owner) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return fmt::format("{}: {}", path, std::strerror(errno));
    if (!S_ISDIR(st.st_mode)) return fmt::format("{}: is {}, not a directory", path, file_kind(st.st_mode));
    if (st.st_uid != owner) return fmt::format("{}: owned by uid {}, not {}", path, st.st_uid, owner);
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return fmt::format("{}: writable by others (mode {:o})", path, st.st_mode & 07777);
    return std::nullopt;
}

void prepare_mps_directory(const std::string& path, const std::string& role) {
    const std::filesystem::path directory(path);
    std::error_code ignored;  // a parent that cannot be made shows as the directory's own problem below
    if (directory.has_parent_path()) std::filesystem::create_directories(directory.parent_path(), ignored);
    // 0755 whatever the umask: clients of other users reach the control socket through the pipe directory.
    if (::mkdir(path.c_str(), 0755) == 0) ::chmod(path.c_str(), 0755);
    if (const auto problem = mps_directory_problem(path, ::geteuid()))
        throw UserError(one_line(fmt::format(
            "{}: not used as the MPS {} directory of a daemon run by {} (another user may have made it first); remove "
            "it or set CUDA_MPS_{}_DIRECTORY to a directory of your own; MPS not started",
            *problem, role, user_name(::geteuid()), role == "pipe" ? "PIPE" : "LOG")));
}

}  // namespace gpupart
