// The system-call side of the pread seqlock (pread_seqlock.hpp).
#include "registry/pread_seqlock.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>

#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "registry/slot_file.hpp"

namespace gpupart {

void syscall_fence() {
#if !defined(__SANITIZE_THREAD__)
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

void pread_exact(int fd, void* out, std::size_t size, std::size_t offset, const std::string& path,
                 std::string_view what) {
    const ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n != static_cast<ssize_t>(size))
        throw RegistryError(fmt::format("{}: cannot read the {} ({}): it was truncated or replaced", one_line(path), what,
                                        n < 0 ? std::strerror(errno) : "short read"));
}

}  // namespace gpupart
