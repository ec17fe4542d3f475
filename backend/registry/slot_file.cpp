#include "registry/slot_file.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <chrono>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/process_identity.hpp"
#include "platform/safe_file.hpp"
#include "platform/user_names.hpp"
#include "registry/pread_seqlock.hpp"
#include "registry/registry_seqlock.h"
#include "registry/registry_slot.h"
#include "registry/control_wake.hpp"

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

const GpuControl* SlotControl::gpu(std::string_view uuid) const {
    for (const auto& entry : gpus)
        if (entry.uuid == uuid) return &entry;
    return nullptr;
}

bool SlotControl::any_mask() const {
    return std::any_of(gpus.begin(), gpus.end(), [](const GpuControl& entry) { return entry.has_mask; });
}

const GpuStatus* SlotStatus::gpu(std::string_view uuid) const {
    for (const auto& entry : gpus)
        if (entry.uuid == uuid) return &entry;
    return nullptr;
}

std::vector<std::string> gpus_of(const SlotRecord& record) {
    std::vector<std::string> uuids;
    if (record.control)
        for (const auto& entry : record.control->gpus) uuids.push_back(entry.uuid);
    if (record.status)
        for (const auto& entry : record.status->gpus) uuids.push_back(entry.uuid);
    std::sort(uuids.begin(), uuids.end());
    uuids.erase(std::unique(uuids.begin(), uuids.end()), uuids.end());
    return uuids;
}

bool counts_on_gpu(const SlotRecord& record, std::string_view uuid) {
    const std::vector<std::string> gpus = gpus_of(record);
    return gpus.empty() || std::find(gpus.begin(), gpus.end(), uuid) != gpus.end();
}

bool mask_change_pending(const SlotRecord& record, std::string_view uuid) {
    if (!record.control || !record.status) return false;
    const GpuStatus* status = record.status->gpu(uuid);
    return status != nullptr && !status->publishing && status->launches > 0 &&
           status->applied_generation != record.control->generation;
}

std::string applied_text(const SlotRecord& record, std::string_view uuid) {
    const GpuStatus* status = record.status ? record.status->gpu(uuid) : nullptr;
    if (status == nullptr || status->launches == 0) return "-";
    if (status->publishing) return "(publishing)";
    if (mask_change_pending(record, uuid)) return "(next launch)";
    return status->mask_applied ? mask_text(status->applied, status->numbered) : "all";
}

std::string mask_text(const TpcMask& mask, bool numbered) { return numbered ? mask.to_list() : "bits:" + mask.to_hex(); }

std::string uuid_text(const gpupart_gpu_uuid& uuid) {
    char text[GPUPART_UUID_TEXT_BYTES];
    gpupart_uuid_format(&uuid, text);
    return text;
}

gpupart_gpu_uuid uuid_words(std::string_view text) {
    gpupart_gpu_uuid uuid{};
    const std::string copy(text);
    if (copy.size() != 40 || gpupart_uuid_parse(copy.c_str(), &uuid) != 40 || gpupart_uuid_is_zero(&uuid))
        throw RegistryError(fmt::format("'{}' is not a GPU UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", one_line(copy)));
    return uuid;
}

std::string_view to_string(gpupart_shim_state state) {
    switch (state) {
        case GPUPART_SHIM_WAITING: return "waiting for a first kernel";
        case GPUPART_SHIM_ACTIVE: return "active";
        case GPUPART_SHIM_UNSUPPORTED_DESCRIPTOR: return "unsupported launch descriptor version: not partitioned";
        case GPUPART_SHIM_CALLBACK_FAILED: return "CUDA launch callback unavailable: not partitioned";
        case GPUPART_SHIM_MASK_REFUSED: return "last requested mask refused (no real TPC): previous mask kept";
        case GPUPART_SHIM_BAD_ENVIRONMENT: return "malformed GPUPART_TPCS/GPUPART_REAL_TPCS: not partitioned";
        case GPUPART_SHIM_NO_MASK_FOR_GPU: return "no mask for this GPU (the process has one for another GPU): unconfined here";
        case GPUPART_SHIM_GPU_UNKNOWN: return "the driver did not say which GPU launched: not partitioned";
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
    : path_(std::move(other.path_)), fd_(other.fd_), writable_(other.writable_), owner_(other.owner_),
      lock_(std::move(other.lock_)) {
    other.fd_ = -1;
}

SlotFile::~SlotFile() {
    lock_.reset();  // before the slot's descriptor it marks
    if (fd_ >= 0) ::close(fd_);
}

namespace {
SlotFile::StoreHook g_store_hook = nullptr;

constexpr std::size_t kControlOffset = offsetof(gpupart_slot_file, control);
constexpr std::size_t kSeqOffset = kControlOffset + offsetof(gpupart_control, seq);
constexpr std::size_t kPayloadOffset = kControlOffset + offsetof(gpupart_control, current);
constexpr std::size_t kSavedOffset = kControlOffset + offsetof(gpupart_control, saved);
constexpr std::size_t kPayloadSize = sizeof(gpupart_control_payload);
constexpr std::size_t kStatusGpusOffset = offsetof(gpupart_slot_file, status) + offsetof(gpupart_status, gpus);
constexpr std::size_t kAppSeqOffset = offsetof(gpupart_slot_file, app) + offsetof(gpupart_app_masks, seq);

void pread_exact(int fd, void* out, std::size_t size, std::size_t offset, const std::string& path) {
    gpupart::pread_exact(fd, out, size, offset, path, "slot");
}

// The sequence numbers of a slot's three seqlocked blocks: the control block's, each status GPU entry's
// (inside the entry), the program's masks'.
struct SlotNumbers {
    std::uint32_t control = 0;
    std::array<gpupart_status_gpu, GPUPART_MAX_GPUS> gpus{};
    std::uint32_t app = 0;
};

SlotControl control_of(const gpupart_control_payload& payload) {
    SlotControl control;
    control.generation = payload.generation;
    control.writer_pid = payload.writer_pid;
    control.writer_uid = payload.writer_uid;
    control.written_ns = payload.written_realtime_ns;
    for (std::uint32_t i = 0; i < std::min<std::uint32_t>(payload.count, GPUPART_MAX_GPUS); ++i) {
        const gpupart_control_gpu& entry = payload.gpus[i];
        if (gpupart_uuid_is_zero(&entry.uuid)) continue;  // not a GPU: never shown as one
        control.gpus.push_back(GpuControl{uuid_text(entry.uuid), (entry.flags & GPUPART_CONTROL_HAS_MASK) != 0,
                                          mask_from_words(entry.allowed), mask_from_words(entry.real_tpcs)});
    }
    return control;
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
    const auto size_problem = [&] {
        return RegistryError(fmt::format("{}: not a gpupart slot file (size {}, expected {}): truncated or not a slot",
                                         one_line(path), static_cast<long long>(info.st_size), GPUPART_SLOT_FILE_SIZE));
    };
    if (info.st_size < static_cast<off_t>(sizeof(gpupart_slot_header))) throw size_problem();
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    file.owner_ = info.st_uid;
    // The header first: a slot of another layout (an older shim's 4 KiB one) is named as such, not as garbage.
    gpupart_slot_header header{};
    pread_exact(fd, &header, sizeof header, 0, path);
    if (std::memcmp(header.magic, GPUPART_REGISTRY_MAGIC, sizeof header.magic) != 0)
        throw RegistryError(fmt::format("{}: not a gpupart slot file (bad magic)", one_line(path)));
    if (header.layout_version != GPUPART_REGISTRY_LAYOUT_VERSION)
        throw RegistryError(fmt::format("{}: registry layout version {} is not the {} this gpupart reads; use the gpupart "
                                        "that matches the shim of this process", one_line(path), header.layout_version,
                                        GPUPART_REGISTRY_LAYOUT_VERSION));
    if (info.st_size != GPUPART_SLOT_FILE_SIZE) throw size_problem();
    if (header.state != GPUPART_SLOT_LIVE)
        throw RegistryError(fmt::format("{}: slot is not published yet", one_line(path)));
    return file;
}

void SlotFile::read_page(gpupart_slot_file& page) const { pread_exact(fd_, &page, sizeof page, 0, path_); }

// Whether a live writer is changing the slot: then an odd seq is a change in progress, not a writer that
// died (the kernel drops a dead writer's OFD locks).
bool SlotFile::write_lock_held_by_other() const { return WriterLock::writer_active(path_, fd_); }

SlotRecord SlotFile::read() const {
    // A seqlock read through pread (pread_seqlock.hpp). The control block has one number, each GPU
    // entry of the status block its own, the program's masks (app) one.
    gpupart_slot_file page{};
    std::optional<gpupart_control_payload> control;
    std::optional<gpupart_app_masks> app;
    std::array<std::optional<gpupart_status_gpu>, GPUPART_MAX_GPUS> gpus;
    std::uint32_t gpu_count = 0;
    const auto read_numbers = [&](SlotNumbers& numbers) {
        pread_exact(fd_, &numbers.control, 4, kSeqOffset, path_);
        pread_exact(fd_, numbers.gpus.data(), sizeof numbers.gpus, kStatusGpusOffset, path_);
        pread_exact(fd_, &numbers.app, 4, kAppSeqOffset, path_);
    };
    // Each block is kept from the first round that saw it whole.
    const auto keep_whole_blocks = [&](const SlotNumbers& before, const SlotNumbers& after) {
        if (!app && seq_unchanged(before.app, after.app)) app = page.app;
        if (!control && seq_unchanged(before.control, after.control)) control = page.control.current;
        // gpu_count is read after the entries' numbers: an entry it covers had its uuid written before it.
        gpu_count = std::min<std::uint32_t>(page.status.gpu_count, GPUPART_MAX_GPUS);
        bool all = true;
        for (std::uint32_t i = 0; i < gpu_count; ++i) {
            if (!gpus[i] && seq_unchanged(before.gpus[i].seq, after.gpus[i].seq)) gpus[i] = page.status.gpus[i];
            all = all && gpus[i].has_value();
        }
        return control && all && app;
    };
    pread_seqlock<SlotNumbers>(kReadTries, read_numbers, [&] { read_page(page); }, keep_whole_blocks);
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
    // Printable ASCII only, whatever a forged slot holds: front ends print it and the controller compares it.
    char job[sizeof page.header.job + 1];
    std::memcpy(job, page.header.job, sizeof page.header.job);
    job[sizeof page.header.job] = '\0';
    char printable[sizeof page.header.job];
    gpupart_printable_ascii(job, printable, sizeof printable);
    record.job = printable;
    if (control) {
        record.control = control_of(*control);
    } else if ((page.control.seq & 1u) != 0 && !write_lock_held_by_other()) {
        // A writer died mid-change: the block before it, saved whole before seq went odd, is the truth
        // until the next change completes it.
        record.control = control_of(page.control.saved);
        record.writer_died = true;
    }
    SlotStatus status;
    const std::uint32_t launch_path = page.status.launch_path;
    status.launch_path = launch_path <= GPUPART_LAUNCH_PATH_STREAMS_AND_CALLBACK ? static_cast<gpupart_launch_path>(launch_path)
                                                                              : GPUPART_LAUNCH_PATH_NOT_SAID;
    const std::uint32_t process_state = page.status.state;
    status.state = process_state <= GPUPART_SHIM_GPU_UNKNOWN ? static_cast<gpupart_shim_state>(process_state)
                                                             : GPUPART_SHIM_WAITING;
    for (std::uint32_t i = 0; i < gpu_count; ++i) {
        const gpupart_status_gpu& entry = gpus[i] ? *gpus[i] : page.status.gpus[i];
        if (gpupart_uuid_is_zero(&entry.uuid)) continue;
        GpuStatus gpu;
        gpu.uuid = uuid_text(entry.uuid);
        gpu.publishing = !gpus[i].has_value();
        gpu.state = entry.state <= GPUPART_SHIM_GPU_UNKNOWN ? static_cast<gpupart_shim_state>(entry.state)
                                                            : GPUPART_SHIM_UNSUPPORTED_DESCRIPTOR;
        gpu.descriptor_version = entry.descriptor_version;
        gpu.applied_generation = entry.applied_generation;
        gpu.mask_applied = (entry.applied_flags & GPUPART_CONTROL_HAS_MASK) != 0;
        gpu.applied = mask_from_words(entry.applied);
        gpu.launches = page.gpu_counters[i].launches;
        gpu.masked_launches = page.gpu_counters[i].masked_launches;
        gpu.applied_ns = page.gpu_counters[i].applied_realtime_ns;
        status.gpus.push_back(std::move(gpu));
    }
    record.status = std::move(status);
    const auto& counters = page.counters;
    record.counters = SlotCounters{counters.launches, counters.masked_launches, counters.last_launch_realtime_ns,
                                   counters.errors, counters.refused_masks, counters.graph_launches};
    const std::uint64_t tracking = counters.graph_tracking;
    record.graphs = SlotGraphs{tracking <= GPUPART_GRAPHS_LAYOUT_UNKNOWN ? static_cast<gpupart_graph_tracking>(tracking)
                                                                        : GPUPART_GRAPHS_LAYOUT_UNKNOWN,
                               counters.graph_generation, counters.graph_execs, counters.graph_current,
                               counters.graph_unfollowable, counters.graph_device_launch, counters.graph_remasks,
                               counters.graph_remask_failures, counters.graph_remasker == 1,
                               counters.graph_settled_generation};
    record.app = app_masks_of(app, page.app);
    return record;
}

void SlotFile::lock(int timeout_ms) { lock_ = std::make_unique<WriterLock>(path_, fd_, timeout_ms); }

void SlotFile::unlock() { lock_.reset(); }

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

bool SlotFile::write_control(const std::string& uuid, bool has_mask, const TpcMask& allowed, const TpcMask& real_tpcs,
                             std::optional<std::uint64_t> expected_generation, int lock_timeout_ms) {
    if (!writable_) throw RegistryError(fmt::format("{}: opened read-only", one_line(path_)));
    const gpupart_gpu_uuid gpu = uuid_words(uuid);
    lock(lock_timeout_ms);
    gpupart_slot_file page{};
    try {
        read_page(page);
    } catch (...) {
        unlock();
        throw;
    }
    gpupart_control_payload current = page.control.current;
    std::uint32_t seq = page.control.seq;
    bool completed = false;
    if ((seq & 1u) != 0) {
        // We hold the lock, so no live writer is mid-change: a dead one left this. Restore the block it
        // saved before it began (stores 0-1), which makes the control block whole again.
        current = page.control.saved;
        store(0, kPayloadOffset, &current, kPayloadSize);
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
    // The new payload: every other GPU's entry as it is, this GPU's replaced, added or removed.
    gpupart_control_payload value{};
    value.generation = current.generation + 1;
    value.writer_pid = ::getpid();
    value.writer_uid = ::getuid();
    value.written_realtime_ns = realtime_ns();
    for (std::uint32_t i = 0; i < std::min<std::uint32_t>(current.count, GPUPART_MAX_GPUS); ++i)
        if (!gpupart_uuid_equal(&current.gpus[i].uuid, &gpu) && !gpupart_uuid_is_zero(&current.gpus[i].uuid))
            value.gpus[value.count++] = current.gpus[i];
    if (has_mask) {
        if (value.count == GPUPART_MAX_GPUS) {
            unlock();
            throw RegistryError(fmt::format("process {} already has masks for {} GPUs, the most a slot holds; nothing "
                                            "changed", page.header.pid, GPUPART_MAX_GPUS));
        }
        gpupart_control_gpu& entry = value.gpus[value.count++];
        entry.uuid = gpu;
        entry.flags = GPUPART_CONTROL_HAS_MASK;
        mask_to_words(allowed, entry.allowed);
        mask_to_words(real_tpcs, entry.real_tpcs);
    }
    // Save the block being replaced (seq still even), make seq odd, write, make seq even (stores 2-5).
    store(2, kSavedOffset, &current, kPayloadSize);
    const std::uint32_t odd = seq + 1;
    store(3, kSeqOffset, &odd, sizeof odd);
    store(4, kPayloadOffset, &value, kPayloadSize);
    const std::uint32_t even = odd + 1;
    store(5, kSeqOffset, &even, sizeof even);
    wake_control_waiters(fd_);
    unlock();
    return completed;
}

}  // namespace gpupart
