#include "fleet/owned_directory.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "fleet/claim.hpp"
#include "model/user_error.hpp"
#include "platform/make_directories.hpp"
#include "platform/safe_file.hpp"

namespace gpupart {
namespace {

// Levels opened at once while removing; anything deeper is moved up and removed from the top.
constexpr int kMaxDepth = 8;
// Directories moved up in one removal: far beyond anything a container's processes make by mistake.
constexpr int kMaxMoves = 100000;

[[noreturn]] void refuse_directory(const std::string& what, const std::string& path, const std::string& why) {
    throw UserError(fmt::format("{} {}: {}; nothing changed", what, one_line(path), why));
}

// A removal stopped partway: some of what was in the directory may be gone, so never "nothing changed".
[[noreturn]] void cannot_remove(const std::string& path, const std::string& why) {
    throw UserError(fmt::format("claim registry {}: {}", one_line(path), why));
}

bool owned_by_us(const struct stat& st) { return st.st_uid == ::geteuid() || st.st_uid == 0; }

// The claim registries' root, mode 0700: a claim's registry is sticky and world-writable for the processes of
// its containers (they see it as /run/gpupart through a bind mount, which needs no way through the root);
// nobody else on the node may reach it to plant anything there.
void close_to_others(const std::string& root) {
    const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) refuse_directory("claim registries", root, fmt::format("cannot open it: {}", std::strerror(errno)));
    FileDescriptor held(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) refuse_directory("claim registries", root, fmt::format("cannot examine it: {}", std::strerror(errno)));
    if ((st.st_mode & 0077) == 0) return;
    if (st.st_uid != ::geteuid() || ::fchmod(fd, 0700) != 0)
        refuse_directory("claim registries", root, fmt::format("other users may reach the claims' registries in it (mode "
                                                               "{:o}): make it 0700", st.st_mode & 07777));
}

struct Removal {
    int top_fd = -1;  // the claim registry itself
    std::string top_path;
    int moved = 0;
};

// Empties the directory `fd` (which it takes over) and everything below it, down to kMaxDepth levels; a
// directory deeper than that is moved up to the claim registry's top level, for the next pass.
void empty_directory(int fd, const std::string& path, int depth, Removal& removal) {
    const std::unique_ptr<DIR, int (*)(DIR*)> dir(::fdopendir(fd), ::closedir);
    if (!dir) {
        const int error = errno;
        ::close(fd);
        cannot_remove(path, fmt::format("cannot read it: {}", std::strerror(error)));
    }
    while (true) {
        errno = 0;
        const dirent* entry = ::readdir(dir.get());
        if (entry == nullptr) {
            if (errno != 0) cannot_remove(path, fmt::format("cannot read it: {}", std::strerror(errno)));
            return;
        }
        const std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        const std::string inner = path + "/" + name;
        if (::unlinkat(::dirfd(dir.get()), name.c_str(), 0) == 0) continue;
        if (errno != EISDIR && errno != EPERM)  // EPERM: Linux's answer for unlink(2) of a directory
            cannot_remove(inner, fmt::format("cannot remove it: {}", std::strerror(errno)));
        if (depth >= kMaxDepth) {
            // Nested deeper than gpupart makes: moved up (never followed: rename moves the entry itself), so
            // nesting of any depth goes with a bounded number of open directories.
            while (true) {
                if (++removal.moved > kMaxMoves)
                    cannot_remove(removal.top_path, fmt::format("more than {} directories nested deeper than {} levels: "
                                                                "remove it by hand", kMaxMoves, kMaxDepth));
                const std::string up = fmt::format(".gpupart-removing-{}", removal.moved);
                if (::renameat2(::dirfd(dir.get()), name.c_str(), removal.top_fd, up.c_str(), RENAME_NOREPLACE) == 0) break;
                if (errno != EEXIST) cannot_remove(inner, fmt::format("cannot move it up to remove it: {}", std::strerror(errno)));
            }
            continue;
        }
        const int child = ::openat(::dirfd(dir.get()), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (child < 0) cannot_remove(inner, fmt::format("cannot remove it: {}", std::strerror(errno)));
        empty_directory(child, inner, depth + 1, removal);
        if (::unlinkat(::dirfd(dir.get()), name.c_str(), AT_REMOVEDIR) != 0)
            cannot_remove(inner, fmt::format("cannot remove it: {}", std::strerror(errno)));
    }
}

}  // namespace

bool use_owned_directory(const std::string& path, const std::string& what, bool create) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno != ENOENT) refuse_directory(what, path, fmt::format("cannot examine it: {}", std::strerror(errno)));
        if (!create) return false;
        make_directories(path, 0755, what);
        if (::lstat(path.c_str(), &st) != 0) refuse_directory(what, path, fmt::format("cannot examine it: {}", std::strerror(errno)));
    }
    if (!S_ISDIR(st.st_mode)) refuse_directory(what, path, fmt::format("is {}, not a directory", file_kind(st.st_mode)));
    if (!owned_by_us(st)) refuse_directory(what, path, fmt::format("owned by uid {}, not by this user or root", st.st_uid));
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        refuse_directory(what, path, fmt::format("writable by others (mode {:o}): make it 0755", st.st_mode & 07777));
    return true;
}

std::string make_claim_registry(const std::string& root, const std::string& uid) {
    check_claim_uid(uid);
    use_owned_directory(root, "claim registries", true);
    close_to_others(root);
    const std::string path = fmt::format("{}/{}", root, uid);
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
        refuse_directory("claim registry", path, fmt::format("cannot create it: {}", std::strerror(errno)));
    // Through a descriptor that cannot be a symlink, so the mode lands on this directory and nothing else.
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) refuse_directory("claim registry", path, fmt::format("is not a directory of its own: {}", std::strerror(errno)));
    FileDescriptor held(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid())
        refuse_directory("claim registry", path, "is not this user's directory");
    if (::fchmod(fd, 01777) != 0) refuse_directory("claim registry", path, fmt::format("cannot set its mode: {}", std::strerror(errno)));
    return path;
}

bool remove_claim_registry(const std::string& root, const std::string& uid) {
    check_claim_uid(uid);
    if (!use_owned_directory(root, "claim registries", false)) return false;
    const int root_fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (root_fd < 0) refuse_directory("claim registries", root, fmt::format("cannot open it: {}", std::strerror(errno)));
    FileDescriptor root_held(root_fd);
    const std::string path = fmt::format("{}/{}", root, uid);
    const int fd = ::openat(root_fd, uid.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return false;
        refuse_directory("claim registry", path, fmt::format("is not a directory of its own: {}", std::strerror(errno)));
    }
    FileDescriptor held(fd);
    // Pass after pass from the top, until a pass moves nothing up: then it is empty.
    Removal removal{fd, path, 0};
    for (int before = -1; before != removal.moved;) {
        before = removal.moved;
        const int pass = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // a reading position of its own
        if (pass < 0) cannot_remove(path, fmt::format("cannot read it: {}", std::strerror(errno)));
        empty_directory(pass, path, 1, removal);
    }
    if (::unlinkat(root_fd, uid.c_str(), AT_REMOVEDIR) != 0)
        cannot_remove(path, fmt::format("cannot remove it: {}", std::strerror(errno)));
    return true;
}

}  // namespace gpupart
