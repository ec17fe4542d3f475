#pragma once
// Opening, reading and replacing files that another user may have planted or may change under us
// . Every file gpupart reads may be a FIFO (an open would block forever), a device node, a
// symlink or huge; every file it writes may be a device node or a symlink planted by someone else.
//  - Reads open with O_NONBLOCK (a FIFO cannot block the open), then fstat the descriptor they hold
//    (never stat the name first: it can be swapped in between) and refuse anything but a regular file;
//    they read at most a stated number of bytes.
//  - Writes go to a new file with a random name made with O_CREAT|O_EXCL (never follows a link, never
//    opens a name someone else made) in the target's directory, then rename() it over the target: the
//    target's directory entry is replaced, nothing is ever written through it. A target that exists and
//    is not a regular file (a device node, a FIFO, a directory, a symlink) is refused.
// Errors are UserError with one line naming the file and what to do.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace gpupart {

// Symlinks: a path the user typed may be one (follow); a name inside a shared directory never is.
enum class Links { follow, refuse };

// An open descriptor, closed on destruction.
class FileDescriptor {
public:
    FileDescriptor() = default;
    explicit FileDescriptor(int fd) : fd_(fd) {}
    FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
    FileDescriptor& operator=(FileDescriptor&& other) noexcept;
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    ~FileDescriptor();
    int get() const { return fd_; }
    int release();
    explicit operator bool() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

// What opening a regular file found.
struct RegularFile {
    FileDescriptor fd;
    off_t size = 0;
    uid_t owner = 0;
    mode_t mode = 0;
};

// Opens `path` (flags: O_RDONLY or O_RDWR, plus O_APPEND/O_CREAT as needed; O_NONBLOCK, O_CLOEXEC and,
// with Links::refuse, O_NOFOLLOW are added) and checks it is a regular file; O_NONBLOCK is cleared
// again. An existing name is first looked at through an O_PATH descriptor, which opens nothing, so a
// device node is never opened at all (opening some acts: a watchdog arms, a tape rewinds). nullopt when
// it does not exist (ENOENT) and `missing_ok`; otherwise throws UserError, e.g. "PATH: is a FIFO, not a
// regular file; the snapshot must be a regular file: nothing done". `what` names the file ("snapshot").
std::optional<RegularFile> open_regular(const std::string& path, int flags, Links links, std::string_view what,
                                        bool missing_ok = false, mode_t create_mode = 0600);

// The whole content of a regular file of at most `max_bytes` (a larger one is refused, not cut).
std::string read_regular_file(const std::string& path, std::size_t max_bytes, Links links, std::string_view what);
// Same, nullopt when the file does not exist.
std::optional<std::string> read_regular_file_if_exists(const std::string& path, std::size_t max_bytes, Links links,
                                                        std::string_view what);

// Reads at most `max_bytes` from an open descriptor to its end (refuses more).
std::string read_bounded(int fd, std::size_t max_bytes, const std::string& path, std::string_view what);

// Replaces `path` with `bytes` as described above (mode `mode`, fsync'd before the rename). The target
// may be missing; if present it must be a regular file (a symlink is refused, whatever it points to).
void replace_file(const std::string& path, std::string_view bytes, mode_t mode, std::string_view what);

// Creates `path` with `bytes` the same way, but only if no file has that name: false (nothing written)
// when one has, even one that appeared while writing (link(2) of the temporary, never rename).
bool create_file(const std::string& path, std::string_view bytes, mode_t mode, std::string_view what);

// "<dir>/.<base>.<16 random hex digits>.tmp": a name nobody can predict (getrandom).
std::string random_temporary_name(const std::string& path);

// What kind of file `mode` describes, in words: "a FIFO", "a character device", "a directory", ...
std::string_view file_kind(mode_t mode);

}  // namespace gpupart
