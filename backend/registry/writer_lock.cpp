#include "registry/writer_lock.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "platform/safe_file.hpp"
#include "platform/user_names.hpp"
#include "registry/registry_slot.h"
#include "registry/slot_file.hpp"

namespace gpupart {
namespace {

std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string lock_path_of(const std::string& slot_path) {
    return directory_of(slot_path) + "/" + GPUPART_WRITERS_LOCK_FILE;
}

int open_lock(const std::string& path, int flags) {
    return ::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
}

// The kind of the first lock that would conflict with a write lock on `fd` (F_UNLCK: none; -1: cannot tell).
int conflicting_lock(int fd) {
    struct flock probe {};
    probe.l_type = F_WRLCK;
    probe.l_whence = SEEK_SET;
    if (::fcntl(fd, F_OFD_GETLK, &probe) != 0) return -1;
    return probe.l_type;
}

bool try_lock(int fd) {
    struct flock request {};
    request.l_type = F_WRLCK;
    request.l_whence = SEEK_SET;
    return ::fcntl(fd, F_OFD_SETLK, &request) == 0;  // errno tells why not
}

// Opens the directory's writers' lock for writing, making it when missing, and checks that only the
// slots' writers can open it (repairing the mode when we may).
int open_writers_lock(const std::string& slot_path) {
    const std::string dir = directory_of(slot_path);
    const std::string path = lock_path_of(slot_path);
    int fd = open_lock(path, O_RDWR);
    if (fd < 0 && errno == ENOENT) {
        if (const int error = gpupart_writers_lock_make(dir.c_str()); error != 0) {
            struct stat info {};
            const std::string owner = ::stat(dir.c_str(), &info) == 0 ? user_name(info.st_uid) : "its owner";
            throw RegistryError(fmt::format("{}: missing and cannot be made ({}): only {} or root can make it; any change "
                                            "they make to one of these processes does; nothing changed",
                                            one_line(path), std::strerror(-error), owner));
        }
        fd = open_lock(path, O_RDWR);
    }
    if (fd < 0) {
        const int error = errno;
        throw RegistryError(fmt::format("{}: cannot open the writers' lock: {}; nothing changed", one_line(path),
                                        error == EACCES ? "only the owner of these processes, root or the registry's "
                                                          "admin group may change them"
                                                        : std::strerror(error)));
    }
    struct stat info {};
    struct stat directory {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || ::stat(dir.c_str(), &directory) != 0 ||
        info.st_uid != directory.st_uid) {
        ::close(fd);
        throw RegistryError(fmt::format("{}: is {} owned by {}, not the writers' lock of {}: remove it; nothing changed",
                                        one_line(path), file_kind(info.st_mode), user_name(info.st_uid),
                                        user_name(directory.st_uid)));
    }
    if ((info.st_mode & 0007) != 0) {
        // Others may open it, so their read lock could hold writers up: close it to them again.
        const mode_t mode = (directory.st_mode & S_ISGID) != 0 ? 0660 : 0600;
        if (::fchmod(fd, mode) != 0) {
            const int error = errno;
            ::close(fd);
            throw RegistryError(fmt::format("{}: other users may open it (mode {:o}) and cannot be closed to them: {}; "
                                            "nothing changed", one_line(path), info.st_mode & 07777, std::strerror(error)));
        }
    }
    return fd;
}

}  // namespace

WriterLock::WriterLock(const std::string& slot_path, int slot_fd, int timeout_ms) : slot_fd_(slot_fd) {
    lock_fd_ = open_writers_lock(slot_path);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    const auto give_up = [&](const char* why) {
        ::close(lock_fd_);
        throw RegistryError(fmt::format("{}: {}", one_line(slot_path), why));
    };
    while (!try_lock(lock_fd_)) {
        if (errno != EAGAIN && errno != EACCES && errno != EINTR) give_up(std::strerror(errno));
        if (std::chrono::steady_clock::now() > deadline) give_up("another gpupart is changing this process; try again");
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    // The marker on the slot. A write lock in the way is a writer of the version before (only writers can
    // take one); a read lock is a reader, and a reader never holds a writer up: then no marker.
    while (!(marked_ = try_lock(slot_fd_))) {
        const int other = conflicting_lock(slot_fd_);
        if (other == F_UNLCK) continue;  // the lock in the way went meanwhile: take the marker now
        if (other != F_WRLCK) break;
        if (std::chrono::steady_clock::now() > deadline) {
            ::close(lock_fd_);
            throw RegistryError(fmt::format("{}: another gpupart is changing this process; try again", one_line(slot_path)));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

WriterLock::~WriterLock() {
    if (marked_) {
        struct flock request {};
        request.l_type = F_UNLCK;
        request.l_whence = SEEK_SET;
        ::fcntl(slot_fd_, F_OFD_SETLK, &request);
    }
    ::close(lock_fd_);  // closing drops the OFD lock
}

bool WriterLock::writer_active(const std::string& slot_path, int slot_fd) {
    const int marker = conflicting_lock(slot_fd);
    if (marker == F_WRLCK || marker == -1) return true;  // -1: cannot tell, assume a live writer
    const int fd = open_lock(lock_path_of(slot_path), O_RDONLY);
    if (fd < 0) return false;  // not ours to open: the marker is all a reader can see
    const int writers = conflicting_lock(fd);
    ::close(fd);
    return writers != F_UNLCK;
}

}  // namespace gpupart
