#include "smlp_fixture.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <csignal>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "registry/registry_seqlock.h"
#include "registry/registry_slot.h"
#include "registry/slot_file.hpp"  // mask_to_words

namespace gpupart::test {
namespace {

std::uint64_t now_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

std::unique_ptr<gpupart_smlp_file> make_smlp_file(const FixtureComponent& component) {
    auto file = std::make_unique<gpupart_smlp_file>();
    std::memset(file.get(), 0, sizeof *file);
    gpupart_smlp_component& h = file->header;
    std::memcpy(h.magic, GPUPART_SMLP_MAGIC, sizeof GPUPART_SMLP_MAGIC);
    h.layout_version = GPUPART_REGISTRY_LAYOUT_VERSION;
    h.file_size = sizeof(gpupart_smlp_file);
    h.state = GPUPART_SLOT_LIVE;
    h.flags = component.numbered ? GPUPART_SMLP_NUMBERED : 0u;
    h.owner_uid = ::getuid();
    if (!component.gpu.empty()) gpupart_uuid_parse(component.gpu.c_str(), &h.gpu);
    mask_to_words(component.tpcs, h.tpcs);
    h.h = component.h;
    h.fq_length = component.fq_length;
    h.created_realtime_ns = now_ns() - 60'000'000'000ull;
    std::snprintf(h.name, sizeof h.name, "%s", component.name.c_str());
    std::uint64_t ticket = 0;
    for (std::size_t i = 0; i < component.requests.size() && i < GPUPART_SMLP_MAX_REQUESTS; ++i) {
        const FixtureRequest& f = component.requests[i];
        gpupart_smlp_request& r = file->requests[i];
        r.pid = f.pid != 0 ? f.pid : ::getpid();
        r.start_time = f.start_time != 0 ? f.start_time : gpupart_process_start_time(r.pid);
        r.tid = r.pid;
        r.priority = f.priority;
        r.ticket = f.ticket;
        ticket = std::max(ticket, f.ticket);
        r.issued_realtime_ns = f.issued_ns != 0 ? f.issued_ns : now_ns() - 2'000'000'000ull;
        if (f.queue == GPUPART_SMLP_SQ) r.satisfied_realtime_ns = f.satisfied_ns != 0 ? f.satisfied_ns : now_ns() - 500'000'000ull;
        mask_to_words(f.granted, r.granted);
        r.granted_tpcs = static_cast<std::uint32_t>(f.granted.count());
        r.level_count = f.levels;
        for (std::uint32_t k = 0; k < std::min<std::uint32_t>(f.levels, GPUPART_SMLP_MAX_LEVELS); ++k) r.levels[k] = 100 / (k + 1);
        r.inheritance = f.inheritance;
        r.inherited_priority = f.inherited_priority;
        std::snprintf(r.label, sizeof r.label, "%s", f.label.c_str());
        r.queue = f.queue;  // last, as the library writes a record
        if (f.queue == GPUPART_SMLP_SQ) ++h.satisfied;
    }
    h.next_ticket = ticket + 1;
    return file;
}

std::string write_smlp_file(const std::string& user_dir, const gpupart_smlp_file& file, const std::string& file_name) {
    const std::string path = user_dir + "/" + (file_name.empty() ? std::string(file.header.name) + GPUPART_SMLP_SUFFIX : file_name);
    const std::string temporary = user_dir + "/.fixture.smlp.tmp";
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot create " + temporary);
    const bool written = ::write(fd, &file, sizeof file) == static_cast<ssize_t>(sizeof file);
    ::close(fd);
    if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
    return path;
}

void write_app_masks(gpupart_app_masks& block, const FixtureAppMasks& masks) {
    const std::uint32_t odd = gpupart_seq_write_begin(&block.seq);
    std::uint32_t flags = masks.in_use ? GPUPART_APP_IN_USE : 0u;
    if (masks.global_set) flags |= GPUPART_APP_GLOBAL_SET;
    gpupart_payload_store32(&block.flags, flags);
    std::uint32_t words[4];
    mask_to_words(~masks.global_allowed, words);
    for (int i = 0; i < 4; ++i) gpupart_payload_store32(&block.global_disable[i], masks.global_set ? words[i] : 0u);
    const auto count = static_cast<std::uint32_t>(std::min<std::size_t>(masks.streams.size(), GPUPART_APP_STREAMS));
    for (std::uint32_t s = 0; s < count; ++s) {
        gpupart_payload_store64(&block.streams[s].stream, masks.streams[s].stream);
        mask_to_words(~masks.streams[s].allowed, words);
        for (int i = 0; i < 4; ++i) gpupart_payload_store32(&block.streams[s].disable[i], words[i]);
        gpupart_store64(&block.streams[s].launches, masks.streams[s].launches);
    }
    gpupart_payload_store32(&block.stream_count, masks.stream_count_override != 0 ? masks.stream_count_override : count);
    gpupart_payload_store32(&block.streams_hidden, masks.streams_hidden);
    gpupart_seq_write_end(&block.seq, odd);
    gpupart_store64(&block.app_launches, masks.app_launches);
    gpupart_store64(&block.next_launches, masks.next_launches);
    gpupart_store64(&block.outside_bound, masks.outside_bound);
}

bool wait_for_writes(const std::string& path, std::size_t offset, unsigned changes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::uint32_t first = 0;
    std::uint32_t now = 0;
    bool moved = false;
    if (::pread(fd, &first, sizeof first, static_cast<off_t>(offset)) == sizeof first) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!moved && std::chrono::steady_clock::now() < deadline) {
            if (::pread(fd, &now, sizeof now, static_cast<off_t>(offset)) != sizeof now) break;
            moved = now - first >= 2 * changes;  // two steps (odd, even) a write
            if (!moved) ::usleep(1000);
        }
    }
    ::close(fd);
    return moved;
}

KilledAtExit::~KilledAtExit() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

}  // namespace gpupart::test
