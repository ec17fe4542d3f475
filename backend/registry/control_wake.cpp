#include "registry/control_wake.hpp"

#include <climits>
#include <cstddef>
#include <cstdint>

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "registry/registry_layout.h"

namespace gpupart {

bool wake_control_waiters(int fd) noexcept {
    constexpr std::size_t seq_offset = offsetof(gpupart_slot_file, control) + offsetof(gpupart_control, seq);
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page <= 0 || static_cast<std::size_t>(page) <= seq_offset) return false;
    void* mapping = ::mmap(nullptr, static_cast<std::size_t>(page), PROT_READ, MAP_SHARED, fd, 0);
    if (mapping == MAP_FAILED) return false;
    auto* seq = reinterpret_cast<std::uint32_t*>(static_cast<char*>(mapping) + seq_offset);
    const long woken = ::syscall(SYS_futex, seq, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
    ::munmap(mapping, static_cast<std::size_t>(page));
    return woken >= 0;
}

}  // namespace gpupart
