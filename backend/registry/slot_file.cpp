#include "registry/slot_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <chrono>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/process_identity.hpp"
#include "platform/safe_file.hpp"
#include "platform/user_names.hpp"
#include "registry/registry_seqlock.h"
#include "registry/registry_slot.h"

namespace gpupart {
namespace {

constexpr int kReadTries = 64;

std::uint64_t realtime_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// A fixed-size field from another process: up to its NUL (or the field's end), made valid UTF-8.
std::string bounded_string(const char* text, std::size_t size) { return valid_utf8(std::string_view(text, strnlen(text, size))); }

}  // namespace

bool mask_change_pending(const SlotRecord& record) {
    return record.control && record.status && record.counters.launches > 0 &&
           record.status->applied_generation != record.control->generation;
}

std::string applied_text(const SlotRecord& record) {
    if (!record.status) return "(publishing)";
    if (record.counters.launches == 0) return "-";
    if (mask_change_pending(record)) return "(next launch)";
    return record.status->mask_applied ? record.status->applied.to_list() : "all";
}

std::string_view to_string(gpupart_shim_state state) {
    switch (state) {
        case GPUPART_SHIM_WAITING: return "waiting for a first kernel";
        case GPUPART_SHIM_ACTIVE: return "active";
        case GPUPART_SHIM_UNSUPPORTED_DESCRIPTOR: return "unsupported launch descriptor version: not partitioned";
        case GPUPART_SHIM_CALLBACK_FAILED: return "CUDA launch callback unavailable: not partitioned";
        case GPUPART_SHIM_MASK_REFUSED: return "last requested mask refused (no real TPC): previous mask kept";
        case GPUPART_SHIM_BAD_ENVIRONMENT: return "malformed GPUPART_TPCS/GPUPART_REAL_TPCS: not partitioned";
    }
    return "unknown shim state";
}

TpcMask mask_from_words(const std::uint32_t words[4]) {
    return TpcMask::from_words(words[0] | (static_cast<std::uint64_t>(words[1]) << 32),
                               words[2] | (static_cast<std::uint64_t>(words[3]) << 32));
}

void mask_to_words(const TpcMask& mask, std::uint32_t words[4]) {
    const auto split = mask.words32();
    for (int i = 0; i < 4; ++i) words[i] = split[static_cast<std::size_t>(i)];
}

SlotFile::SlotFile(std::string path, int fd, bool writable, unsigned owner)
    : path_(std::move(path)), fd_(fd), writable_(writable), owner_(owner) {}

SlotFile::SlotFile(SlotFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), writable_(other.writable_), owner_(other.owner_) {
    other.fd_ = -1;
}

SlotFile::~SlotFile() {
    if (fd_ >= 0) ::close(fd_);
}

namespace {
SlotFile::StoreHook g_store_hook = nullptr;

constexpr std::size_t kControlOffset = offsetof(gpupart_slot_file, control);
constexpr std::size_t kStatusOffset = offsetof(gpupart_slot_file, status);
constexpr std::size_t kSeqOffset = kControlOffset + offsetof(gpupart_control, seq);
constexpr std::size_t kPayloadOffset = kControlOffset + offsetof(gpupart_control, flags);
constexpr std::size_t kPayloadSize = offsetof(gpupart_control, saved) - offsetof(gpupart_control, flags);
constexpr std::size_t kSavedOffset = kControlOffset + offsetof(gpupart_control, saved);
static_assert(kPayloadSize == 60, "flags .. written_realtime_ns: the fields a change writes");

// A full fence between the system calls of the pread/pwrite seqlock, so that on a weakly ordered CPU the
// kernel's copies of one call are ordered before those of the next as the shim's acquire loads need.
// ThreadSanitizer does not model fences (GCC refuses them under -fsanitize=thread) and cannot see the
// kernel's copies in any case, so its builds leave it out; the mapped protocol is what TSan checks.
void syscall_fence() {
#if !defined(__SANITIZE_THREAD__)
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

void pread_exact(int fd, void* out, std::size_t size, std::size_t offset, const std::string& path) {
    const ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n != static_cast<ssize_t>(size))
        throw RegistryError(fmt::format("{}: cannot read the slot ({}): it was truncated or replaced", one_line(path),
                                        n < 0 ? std::strerror(errno) : "short read"));
}

// The saved block as the payload it stands for (the layouts differ: saved has no seq).
void payload_from_saved(const gpupart_control_saved& saved, gpupart_control& control) {
    control.flags = saved.flags;
    control.generation = saved.generation;
    std::memcpy(control.allowed, saved.allowed, sizeof control.allowed);
    std::memcpy(control.real_tpcs, saved.real_tpcs, sizeof control.real_tpcs);
    control.writer_pid = saved.writer_pid;
    control.writer_uid = saved.writer_uid;
    control.written_realtime_ns = saved.written_realtime_ns;
}

gpupart_control_saved saved_from_payload(const gpupart_control& control) {
    gpupart_control_saved saved{};
    saved.flags = control.flags;
    saved.generation = control.generation;
    std::memcpy(saved.allowed, control.allowed, sizeof saved.allowed);
    std::memcpy(saved.real_tpcs, control.real_tpcs, sizeof saved.real_tpcs);
    saved.writer_pid = control.writer_pid;
    saved.writer_uid = control.writer_uid;
    saved.written_realtime_ns = control.written_realtime_ns;
    return saved;
}

SlotControl control_of(const gpupart_control& control) {
    return SlotControl{(control.flags & GPUPART_CONTROL_HAS_MASK) != 0, control.generation,
                       mask_from_words(control.allowed), mask_from_words(control.real_tpcs),
                       control.writer_pid, control.writer_uid, control.written_realtime_ns};
}
}  // namespace

void SlotFile::set_store_hook_for_test(StoreHook hook) { g_store_hook = hook; }

SlotFile SlotFile::open(const std::string& path, bool writable) {
    // O_NONBLOCK: a FIFO planted under a slot's name cannot block the open; fstat then refuses it.
    const int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        const int error = errno;
        struct stat info {};
        if (error == EACCES && ::lstat(path.c_str(), &info) == 0)
            throw RegistryError(fmt::format("{} belongs to {}: only its owner, root or members of the registry's admin "
                                            "group may change it", one_line(path), user_name(info.st_uid)));
        throw RegistryError(fmt::format("{}: cannot open: {}", one_line(path), std::strerror(error)));
    }
    SlotFile file(path, fd, writable, 0);
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
        throw RegistryError(fmt::format("{}: is {}, not a gpupart slot file: ignored", one_line(path), file_kind(info.st_mode)));
    if (info.st_size != GPUPART_SLOT_FILE_SIZE)
        throw RegistryError(fmt::format("{}: not a gpupart slot file (size {}, expected {}): truncated or not a slot",
                                        one_line(path), static_cast<long long>(info.st_size), GPUPART_SLOT_FILE_SIZE));
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    file.owner_ = info.st_uid;
    gpupart_slot_header header{};
    pread_exact(fd, &header, sizeof header, 0, path);
    if (std::memcmp(header.magic, GPUPART_REGISTRY_MAGIC, sizeof header.magic) != 0)
        throw RegistryError(fmt::format("{}: not a gpupart slot file (bad magic)", one_line(path)));
    if (header.layout_version != GPUPART_REGISTRY_LAYOUT_VERSION)
        throw RegistryError(fmt::format("{}: registry layout version {} is not the {} this gpupart reads; use the gpupart "
                                        "that matches the shim of this process", one_line(path), header.layout_version,
                                        GPUPART_REGISTRY_LAYOUT_VERSION));
    if (header.state != GPUPART_SLOT_LIVE)
        throw RegistryError(fmt::format("{}: slot is not published yet", one_line(path)));
    return file;
}

void SlotFile::read_page(gpupart_slot_file& page) const { pread_exact(fd_, &page, sizeof page, 0, path_); }

// Whether a live process holds the slot's write lock: then an odd seq is a change in progress, not a
// writer that died (the kernel drops a dead writer's OFD lock).
bool SlotFile::write_lock_held_by_other() const {
    struct flock probe {};
    probe.l_type = F_WRLCK;
    probe.l_whence = SEEK_SET;
    if (::fcntl(fd_, F_OFD_GETLK, &probe) != 0) return true;  // cannot tell: assume a live writer
    return probe.l_type != F_UNLCK;
}

SlotRecord SlotFile::read() const {
    // A seqlock read through pread: the sequence numbers, then the page, then the sequence numbers
    // again; a block is consistent when its number was even and did not move. Each pread is a system
    // call, and the fences keep the three reads in this order on weakly ordered CPUs too.
    gpupart_slot_file page{};
    std::optional<gpupart_control> control;
    std::optional<gpupart_status> status;
    for (int attempt = 0; attempt < kReadTries && (!control || !status); ++attempt) {
        std::uint32_t before[2];
        std::uint32_t after[2];
        pread_exact(fd_, &before[0], 4, kSeqOffset, path_);
        pread_exact(fd_, &before[1], 4, kStatusOffset, path_);
        syscall_fence();
        read_page(page);
        syscall_fence();
        pread_exact(fd_, &after[0], 4, kSeqOffset, path_);
        pread_exact(fd_, &after[1], 4, kStatusOffset, path_);
        if (!control && (before[0] & 1u) == 0 && before[0] == after[0]) control = page.control;
        if (!status && (before[1] & 1u) == 0 && before[1] == after[1]) status = page.status;
        if (!control || !status) std::this_thread::yield();
    }
    SlotRecord record;
    record.path = path_;
    record.file_owner = owner_;
    // The header is immutable once open() saw state LIVE.
    record.pid = page.header.pid;
    record.start_time = page.header.start_time;
    record.uid = page.header.uid;
    record.created_ns = page.header.created_realtime_ns;
    record.shim_version = bounded_string(page.header.shim_version, sizeof page.header.shim_version);
    record.command = bounded_string(page.command, sizeof page.command);
    record.start_rule = bounded_string(page.header.start_rule, sizeof page.header.start_rule);
    if (control) {
        record.control = control_of(*control);
    } else if ((page.control.seq & 1u) != 0 && !write_lock_held_by_other()) {
        // A writer died mid-change: the block before it, saved whole before seq went odd, is the truth
        // until the next change completes it.
        gpupart_control before{};
        payload_from_saved(page.control.saved, before);
        record.control = control_of(before);
        record.writer_died = true;
    }
    if (status)
        record.status = SlotStatus{static_cast<gpupart_shim_state>(status->state), status->descriptor_version,
                                   status->applied_generation, (status->applied_flags & GPUPART_CONTROL_HAS_MASK) != 0,
                                   mask_from_words(status->applied)};
    const auto& counters = page.counters;
    record.counters = SlotCounters{counters.launches, counters.masked_launches, counters.last_launch_realtime_ns,
                                   counters.errors, counters.refused_masks};
    const std::uint64_t tracking = counters.graph_tracking;
    record.graphs = SlotGraphs{tracking <= GPUPART_GRAPHS_LAYOUT_UNKNOWN ? static_cast<gpupart_graph_tracking>(tracking)
                                                                        : GPUPART_GRAPHS_LAYOUT_UNKNOWN,
                               counters.graph_generation, counters.graph_execs, counters.graph_current,
                               counters.graph_unfollowable, counters.graph_device_launch, counters.graph_remasks,
                               counters.graph_remask_failures};
    return record;
}

void SlotFile::lock(int timeout_ms) {
    struct flock request {};
    request.l_type = F_WRLCK;
    request.l_whence = SEEK_SET;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (::fcntl(fd_, F_OFD_SETLK, &request) != 0) {
        if (errno != EAGAIN && errno != EACCES && errno != EINTR)
            throw RegistryError(fmt::format("{}: cannot lock: {}", one_line(path_), std::strerror(errno)));
        if (std::chrono::steady_clock::now() > deadline)
            throw RegistryError(fmt::format("{}: another gpupart is changing this process; try again", one_line(path_)));
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

void SlotFile::unlock() {
    struct flock request {};
    request.l_type = F_UNLCK;
    request.l_whence = SEEK_SET;
    ::fcntl(fd_, F_OFD_SETLK, &request);
}

// One store of the write protocol. The fences order it against the stores before and after it as the
// shim, reading the same page through its mapping with acquire loads, must see them.
void SlotFile::store(int index, std::size_t offset, const void* bytes, std::size_t size) {
    if (g_store_hook != nullptr) g_store_hook(index);
    syscall_fence();
    const ssize_t n = ::pwrite(fd_, bytes, size, static_cast<off_t>(offset));
    syscall_fence();
    if (n != static_cast<ssize_t>(size)) {
        const int error = errno;
        unlock();
        throw RegistryError(fmt::format("{}: cannot write the slot ({}); the process keeps its mask", one_line(path_),
                                        n < 0 ? std::strerror(error) : "short write"));
    }
}

bool SlotFile::write_control(bool has_mask, const TpcMask& allowed, const TpcMask& real_tpcs,
                             std::optional<std::uint64_t> expected_generation, int lock_timeout_ms) {
    if (!writable_) throw RegistryError(fmt::format("{}: opened read-only", one_line(path_)));
    lock(lock_timeout_ms);
    gpupart_slot_file page{};
    try {
        read_page(page);
    } catch (...) {
        unlock();
        throw;
    }
    gpupart_control current = page.control;
    std::uint32_t seq = current.seq;
    bool completed = false;
    if ((seq & 1u) != 0) {
        // We hold the lock, so no live writer is mid-change: a dead one left this. Restore the block it
        // saved before it began (stores 0-1), which makes the control block whole again.
        payload_from_saved(page.control.saved, current);
        store(0, kPayloadOffset, &current.flags, kPayloadSize);
        ++seq;
        store(1, kSeqOffset, &seq, sizeof seq);
        completed = true;
    }
    if (expected_generation && current.generation != *expected_generation) {
        unlock();
        throw RegistryError(fmt::format("process {} was changed by someone else since (generation {} is now {}); nothing "
                                        "changed: look again and retry", page.header.pid, *expected_generation,
                                        current.generation));
    }
    gpupart_control value{};
    value.flags = has_mask ? GPUPART_CONTROL_HAS_MASK : 0u;
    value.generation = current.generation + 1;
    mask_to_words(allowed, value.allowed);
    mask_to_words(real_tpcs, value.real_tpcs);
    value.writer_pid = ::getpid();
    value.writer_uid = ::getuid();
    value.written_realtime_ns = realtime_ns();
    // Save the block being replaced (seq still even), make seq odd, write, make seq even (stores 2-5).
    const gpupart_control_saved saved = saved_from_payload(current);
    store(2, kSavedOffset, &saved, sizeof saved);
    const std::uint32_t odd = seq + 1;
    store(3, kSeqOffset, &odd, sizeof odd);
    store(4, kPayloadOffset, &value.flags, kPayloadSize);
    const std::uint32_t even = odd + 1;
    store(5, kSeqOffset, &even, sizeof even);
    unlock();
    return completed;
}

}  // namespace gpupart
