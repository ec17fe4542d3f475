#include "registry/slot_file.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "platform/user_names.hpp"
#include "registry/process_identity.hpp"
#include "registry/registry_seqlock.h"
#include "registry/registry_slot.h"

namespace gpupart {
namespace {

constexpr int kReadTries = 64;

std::uint64_t realtime_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

std::string bounded_string(const char* text, std::size_t size) { return std::string(text, strnlen(text, size)); }

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

SlotFile::SlotFile(std::string path, int fd, gpupart_slot_file* slot, bool writable, unsigned owner)
    : path_(std::move(path)), fd_(fd), slot_(slot), writable_(writable), owner_(owner) {}

SlotFile::SlotFile(SlotFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), slot_(other.slot_), writable_(other.writable_), owner_(other.owner_) {
    other.fd_ = -1;
    other.slot_ = nullptr;
}

SlotFile::~SlotFile() {
    if (slot_ != nullptr) ::munmap(slot_, GPUPART_SLOT_FILE_SIZE);
    if (fd_ >= 0) ::close(fd_);
}

SlotFile SlotFile::open(const std::string& path, bool writable) {
    const int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        const int error = errno;
        struct stat info {};
        if (error == EACCES && ::stat(path.c_str(), &info) == 0)
            throw RegistryError(fmt::format("{} belongs to {}: only its owner, root or members of the registry's admin "
                                            "group may change it", path, user_name(info.st_uid)));
        throw RegistryError(fmt::format("{}: cannot open: {}", path, std::strerror(error)));
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size != GPUPART_SLOT_FILE_SIZE) {
        ::close(fd);
        throw RegistryError(fmt::format("{}: not a gpupart slot file (size {}, expected {})", path,
                                        static_cast<long long>(info.st_size), GPUPART_SLOT_FILE_SIZE));
    }
    void* memory = ::mmap(nullptr, GPUPART_SLOT_FILE_SIZE, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    if (memory == MAP_FAILED) {
        const int error = errno;
        ::close(fd);
        throw RegistryError(fmt::format("{}: cannot map: {}", path, std::strerror(error)));
    }
    auto* slot = static_cast<gpupart_slot_file*>(memory);
    SlotFile file(path, fd, slot, writable, info.st_uid);
    if (std::memcmp(slot->header.magic, GPUPART_REGISTRY_MAGIC, sizeof slot->header.magic) != 0)
        throw RegistryError(fmt::format("{}: not a gpupart slot file (bad magic)", path));
    const std::uint32_t version = gpupart_load32(&slot->header.layout_version);
    if (version != GPUPART_REGISTRY_LAYOUT_VERSION)
        throw RegistryError(fmt::format("{}: registry layout version {} is not the {} this gpupart reads; use the gpupart "
                                        "that matches the shim of this process", path, version,
                                        GPUPART_REGISTRY_LAYOUT_VERSION));
    if (__atomic_load_n(&slot->header.state, __ATOMIC_ACQUIRE) != GPUPART_SLOT_LIVE)
        throw RegistryError(fmt::format("{}: slot is not published yet", path));
    return file;
}

SlotRecord SlotFile::read() const {
    SlotRecord record;
    record.path = path_;
    record.file_owner = owner_;
    // The header is immutable once the acquire load in open() saw state LIVE.
    record.pid = slot_->header.pid;
    record.start_time = slot_->header.start_time;
    record.uid = slot_->header.uid;
    record.created_ns = slot_->header.created_realtime_ns;
    record.shim_version = bounded_string(slot_->header.shim_version, sizeof slot_->header.shim_version);
    record.command = bounded_string(slot_->command, sizeof slot_->command);
    record.start_rule = bounded_string(slot_->header.start_rule, sizeof slot_->header.start_rule);

    gpupart_control control{};
    if (gpupart_control_read(&slot_->control, &control, kReadTries) == 0)
        record.control = SlotControl{(control.flags & GPUPART_CONTROL_HAS_MASK) != 0, control.generation,
                                     mask_from_words(control.allowed), mask_from_words(control.real_tpcs),
                                     control.writer_pid, control.writer_uid, control.written_realtime_ns};
    gpupart_status status{};
    if (gpupart_status_read(&slot_->status, &status, kReadTries) == 0)
        record.status = SlotStatus{static_cast<gpupart_shim_state>(status.state), status.descriptor_version,
                                   status.applied_generation, (status.applied_flags & GPUPART_CONTROL_HAS_MASK) != 0,
                                   mask_from_words(status.applied)};
    auto& counters = slot_->counters;
    record.counters = SlotCounters{gpupart_load64(&counters.launches), gpupart_load64(&counters.masked_launches),
                                   gpupart_load64(&counters.last_launch_realtime_ns), gpupart_load64(&counters.errors),
                                   gpupart_load64(&counters.refused_masks)};
    const std::uint64_t tracking = gpupart_load64(&counters.graph_tracking);
    record.graphs = SlotGraphs{tracking <= GPUPART_GRAPHS_LAYOUT_UNKNOWN ? static_cast<gpupart_graph_tracking>(tracking)
                                                                        : GPUPART_GRAPHS_LAYOUT_UNKNOWN,
                               gpupart_load64(&counters.graph_generation), gpupart_load64(&counters.graph_execs),
                               gpupart_load64(&counters.graph_current), gpupart_load64(&counters.graph_unfollowable),
                               gpupart_load64(&counters.graph_device_launch), gpupart_load64(&counters.graph_remasks),
                               gpupart_load64(&counters.graph_remask_failures)};
    return record;
}

void SlotFile::lock(int timeout_ms) {
    struct flock request {};
    request.l_type = F_WRLCK;
    request.l_whence = SEEK_SET;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (::fcntl(fd_, F_OFD_SETLK, &request) != 0) {
        if (errno != EAGAIN && errno != EACCES && errno != EINTR)
            throw RegistryError(fmt::format("{}: cannot lock: {}", path_, std::strerror(errno)));
        if (std::chrono::steady_clock::now() > deadline)
            throw RegistryError(fmt::format("{}: another gpupart is changing this process; try again", path_));
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

void SlotFile::unlock() {
    struct flock request {};
    request.l_type = F_UNLCK;
    request.l_whence = SEEK_SET;
    ::fcntl(fd_, F_OFD_SETLK, &request);
}

void SlotFile::write_control(bool has_mask, const TpcMask& allowed, const TpcMask& real_tpcs,
                             std::optional<std::uint64_t> expected_generation, int lock_timeout_ms) {
    if (!writable_) throw RegistryError(fmt::format("{}: opened read-only", path_));
    lock(lock_timeout_ms);
    const std::uint64_t current = gpupart_load64(&slot_->control.generation);
    if (expected_generation && current != *expected_generation) {
        unlock();
        throw RegistryError(fmt::format("process {} was changed by someone else since (generation {} is now {}); nothing "
                                        "changed: look again and retry", slot_->header.pid, *expected_generation, current));
    }
    gpupart_control value{};
    value.flags = has_mask ? GPUPART_CONTROL_HAS_MASK : 0u;
    // The generation grows from the last value in the file, whatever state a dead writer left it in.
    value.generation = current + 1;
    mask_to_words(allowed, value.allowed);
    mask_to_words(real_tpcs, value.real_tpcs);
    value.writer_pid = ::getpid();
    value.writer_uid = ::getuid();
    value.written_realtime_ns = realtime_ns();
    gpupart_control_write(&slot_->control, &value);
    unlock();
}

void SlotFile::begin_write_and_stop_for_test() {
    lock(2000);
    gpupart_seq_write_begin(&slot_->control.seq);
    gpupart_store32(&slot_->control.allowed[0], 0xdeadbeefu);
}

}  // namespace gpupart
