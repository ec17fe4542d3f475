#pragma once
// Seqlock reads through pread, for the files other processes write through their own mapping (slots,
// SMLP components). A reader that only may read such a file cannot map it shared and trust it, so it
// copies it with system calls instead: the sequence numbers, the file, the numbers again, with a full
// fence between the calls; a block is consistent when its number was even and did not move. Written once
// here so every reader makes the same ordering argument.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

namespace gpupart {

// A full fence between the system calls of the pread/pwrite seqlock, so that on a weakly ordered CPU the
// kernel's copies of one call are ordered before those of the next as the shim's acquire loads need.
// ThreadSanitizer does not model fences (GCC refuses them under -fsanitize=thread) and cannot see the
// kernel's copies in any case, so its builds leave it out; the mapped protocol is what TSan checks.
void syscall_fence();

// Reads exactly `size` bytes at `offset`, or throws RegistryError
// "<path>: cannot read the <what> (<reason>): it was truncated or replaced".
void pread_exact(int fd, void* out, std::size_t size, std::size_t offset, const std::string& path,
                 std::string_view what);

// Whether a sequence number read before and after a copy vouches for the copy: even (no write was in
// progress) and unmoved (none began or ended meanwhile).
constexpr bool seq_unchanged(std::uint32_t before, std::uint32_t after) { return (before & 1u) == 0 && before == after; }

// Up to `tries` rounds of: read_numbers(before), fence, read_file(), fence, read_numbers(after); a round
// that accept(before, after) takes ends the read (true). Yields between rounds, never blocks; false when
// no round was accepted (a write in progress all along, or a writer that died mid-write).
template <class Numbers, class ReadNumbers, class ReadFile, class Accept>
bool pread_seqlock(int tries, ReadNumbers read_numbers, ReadFile read_file, Accept accept) {
    for (int attempt = 0; attempt < tries; ++attempt) {
        Numbers before{};
        Numbers after{};
        read_numbers(before);
        syscall_fence();
        read_file();
        syscall_fence();
        read_numbers(after);
        if (accept(before, after)) return true;
        std::this_thread::yield();
    }
    return false;
}

}  // namespace gpupart
