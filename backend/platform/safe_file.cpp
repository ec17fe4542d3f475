#include "platform/safe_file.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"

namespace gpupart {

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = other.release();
    }
    return *this;
}

FileDescriptor::~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
}

int FileDescriptor::release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
}

std::string_view file_kind(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "not a regular file";
}

namespace {

[[noreturn]] void refuse_kind(const std::string& path, mode_t mode, std::string_view what) {
    if (S_ISLNK(mode))
        throw UserError(fmt::format("{}: is a symbolic link; gpupart does not follow links here ({}): nothing done",
                                    one_line(path), what));
    throw UserError(fmt::format("{}: is {}, not a regular file; the {} must be a regular file: nothing done",
                                one_line(path), file_kind(mode), what));
}

}  // namespace

std::optional<RegularFile> open_regular(const std::string& path, int flags, Links links, std::string_view what,
                                        bool missing_ok, mode_t create_mode) {
    const int nofollow = links == Links::refuse ? O_NOFOLLOW : 0;
    // Look before opening: merely opening some device nodes acts (a watchdog arms, a tape rewinds), and
    // O_NONBLOCK does not stop that. An O_PATH descriptor opens nothing; its fstat says what the name is.
    // The real open below checks again, so a swap in between is refused, never read.
    struct stat before {};
    bool looked = false;
    {
        FileDescriptor probe(::open(path.c_str(), O_PATH | O_CLOEXEC | nofollow));
        if (probe) {
            if (::fstat(probe.get(), &before) != 0)
                throw UserError(fmt::format("{}: cannot examine the {}: {}", one_line(path), what, std::strerror(errno)));
            if (!S_ISREG(before.st_mode)) refuse_kind(path, before.st_mode, what);
            looked = true;
        }
    }
    const int full = flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | nofollow;
    FileDescriptor fd(::open(path.c_str(), full, create_mode));
    if (!fd) {
        const int error = errno;
        if (error == ENOENT && missing_ok) return std::nullopt;
        if (error == ELOOP && links == Links::refuse) refuse_kind(path, S_IFLNK, what);
        throw UserError(fmt::format("{}: cannot open the {}: {}", one_line(path), what, std::strerror(error)));
    }
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0)
        throw UserError(fmt::format("{}: cannot examine the {}: {}", one_line(path), what, std::strerror(errno)));
    if (!S_ISREG(info.st_mode)) refuse_kind(path, info.st_mode, what);
    if (looked && (info.st_dev != before.st_dev || info.st_ino != before.st_ino))
        throw UserError(fmt::format("{}: the {} was replaced while gpupart opened it: nothing done", one_line(path), what));
    // Regular files never block; clearing O_NONBLOCK keeps later reads and locks ordinary.
    const int status = ::fcntl(fd.get(), F_GETFL);
    if (status >= 0) ::fcntl(fd.get(), F_SETFL, status & ~O_NONBLOCK);
    return RegularFile{std::move(fd), info.st_size, info.st_uid, info.st_mode};
}

std::string read_bounded(int fd, std::size_t max_bytes, const std::string& path, std::string_view what) {
    std::string content;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw UserError(fmt::format("{}: cannot read the {}: {}", one_line(path), what, std::strerror(errno)));
        }
        if (n == 0) return content;
        if (content.size() + static_cast<std::size_t>(n) > max_bytes)
            throw UserError(fmt::format("{}: the {} is larger than {} bytes, more than any real one: nothing read",
                                        one_line(path), what, max_bytes));
        content.append(buffer, static_cast<std::size_t>(n));
    }
}

std::string read_regular_file(const std::string& path, std::size_t max_bytes, Links links, std::string_view what) {
    auto file = open_regular(path, O_RDONLY, links, what);
    if (static_cast<std::uint64_t>(file->size) > max_bytes)
        throw UserError(fmt::format("{}: the {} is {} bytes, more than the {} any real one needs: nothing read",
                                    one_line(path), what, static_cast<long long>(file->size), max_bytes));
    return read_bounded(file->fd.get(), max_bytes, path, what);
}

std::optional<std::string> read_regular_file_if_exists(const std::string& path, std::size_t max_bytes, Links links,
                                                        std::string_view what) {
    auto file = open_regular(path, O_RDONLY, links, what, true);
    if (!file) return std::nullopt;
    if (static_cast<std::uint64_t>(file->size) > max_bytes)
        throw UserError(fmt::format("{}: the {} is {} bytes, more than the {} any real one needs: nothing read",
                                    one_line(path), what, static_cast<long long>(file->size), max_bytes));
    return read_bounded(file->fd.get(), max_bytes, path, what);
}

std::string random_temporary_name(const std::string& path) {
    unsigned char random[8];
    std::size_t filled = 0;
    while (filled < sizeof random) {
        const ssize_t n = ::getrandom(random + filled, sizeof random - filled, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw UserError(fmt::format("cannot draw a random name for {}: {}", one_line(path), std::strerror(errno)));
        filled += static_cast<std::size_t>(n);
    }
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string hex;
    for (unsigned char byte : random) hex += fmt::format("{:02x}", byte);
    return fmt::format("{}/.{}.{}.tmp", dir == "/" ? "" : dir, base, hex);
}

namespace {

// Writes `bytes` to a new file with a random name beside `path` and returns that name. O_EXCL fails
// on any existing name, a planted symlink included, so nothing is ever written through one.
std::string write_temporary(const std::string& path, std::string_view bytes, mode_t mode, std::string_view what) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
        throw UserError(fmt::format("{}: is {}; gpupart writes the {} only to a new or regular file: nothing written",
                                    one_line(path), file_kind(info.st_mode), what));
    const std::string temporary = random_temporary_name(path);
    FileDescriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd)
        throw UserError(fmt::format("{}: cannot write the {} (temporary {}): {}: nothing written", one_line(path), what,
                                    one_line(temporary), std::strerror(errno)));
    auto fail = [&](const char* step, int error) {
        ::unlink(temporary.c_str());
        throw UserError(fmt::format("{}: cannot {} the {}: {}; the file is as it was", one_line(path), step, what,
                                    std::strerror(error)));
    };
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("write", errno);
        if (n == 0) fail("write", ENOSPC);  // write(2) makes no progress only when there is no room
        done += static_cast<std::size_t>(n);
    }
    // The mode asked for, whatever the umask: registry slots must be readable by their readers.
    if (::fchmod(fd.get(), mode) != 0) fail("set the mode of", errno);
    if (::fsync(fd.get()) != 0) fail("write", errno);
    if (::close(fd.release()) != 0) fail("write", errno);
    return temporary;
}

// The new directory entry survives a crash only once the directory itself is on disk. Best effort:
// the file is in place either way, and a directory we cannot open for reading still took the rename.
void sync_directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    FileDescriptor fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd) ::fsync(fd.get());
}

}  // namespace

void replace_file(const std::string& path, std::string_view bytes, mode_t mode, std::string_view what) {
    const std::string temporary = write_temporary(path, bytes, mode, what);
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temporary.c_str());
        throw UserError(fmt::format("{}: cannot replace the {}: {}; the file is as it was", one_line(path), what,
                                    std::strerror(error)));
    }
    sync_directory_of(path);
}

bool create_file(const std::string& path, std::string_view bytes, mode_t mode, std::string_view what) {
    const std::string temporary = write_temporary(path, bytes, mode, what);
    // link(2) puts the file in place only if nothing has the name, even if someone raced us to it.
    const int linked = ::link(temporary.c_str(), path.c_str());
    const int error = errno;
    ::unlink(temporary.c_str());
    if (linked == 0) {
        sync_directory_of(path);
        return true;
    }
    if (error == EEXIST) return false;
    throw UserError(fmt::format("{}: cannot create the {}: {}: nothing written", one_line(path), what,
                                std::strerror(error)));
}

}  // namespace gpupart
