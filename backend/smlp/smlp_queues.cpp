// What an SMLP component file's values mean (smlp_layout.h, Ali et al.'s (ECRTS 2024) Rules 1-5), checked before they
// are shown: a record in no queue, a grant outside the component or overlapping another, more FQ records
// than M, a granularity that does not divide the component are refused with one line naming what broke.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "registry/slot_file.hpp"  // RegistryError, mask_from_words, uuid_text
#include "registry/registry_slot.h"
#include "smlp/smlp_file.hpp"

namespace gpupart {
namespace {

// A fixed-size text field from another process: up to its NUL (or the field's end), valid UTF-8.
std::string field_text(const char* text, std::size_t size) { return valid_utf8(std::string_view(text, strnlen(text, size))); }

RegistryError broken(const std::string& path, const std::string& what) {
    return RegistryError(fmt::format("{}: {}: not shown (a corrupt or hostile component file)", one_line(path), what));
}

SmlpRequest request_of(const gpupart_smlp_request& r, int index) {
    SmlpRequest request;
    request.record = index;
    request.queue = static_cast<gpupart_smlp_queue>(r.queue);
    request.pid = r.pid;
    request.start_time = r.start_time;
    request.tid = r.tid;
    request.priority = r.priority;
    request.ticket = r.ticket;
    request.issued_ns = r.issued_realtime_ns;
    request.satisfied_ns = r.satisfied_realtime_ns;
    request.granted = mask_from_words(r.granted);
    request.granted_tpcs = r.granted_tpcs;
    request.levels.assign(r.levels, r.levels + std::min<std::uint32_t>(r.level_count, GPUPART_SMLP_MAX_LEVELS));
    request.tolerance_ppm = r.tolerance_ppm;
    request.inherited_priority = r.inherited_priority;
    request.inheritance = static_cast<gpupart_smlp_inheritance>(r.inheritance);
    request.label = field_text(r.label, sizeof r.label);
    request.liveness = process_liveness(r.pid, r.start_time);
    return request;
}

// One record against the rules every record in a queue must keep; SQ grants are checked together below.
void check_record(const gpupart_smlp_request& r, int index, const SmlpComponent& c, const std::string& path) {
    if (r.queue > GPUPART_SMLP_SQ) throw broken(path, fmt::format("record {} is in queue {}, which is none of PQ, FQ, SQ", index, r.queue));
    if (r.queue == GPUPART_SMLP_FREE) return;
    if (r.pid <= 0) throw broken(path, fmt::format("record {} names process {}", index, r.pid));
    const unsigned levels = static_cast<unsigned>(c.size) / c.granularity;
    if (r.level_count == 0 || r.level_count > levels)
        throw broken(path, fmt::format("record {} has {} levels, not 1 to H/h = {}", index, r.level_count, levels));
    if (r.inheritance > GPUPART_SMLP_INHERIT_REFUSED)
        throw broken(path, fmt::format("record {} has inheritance state {}", index, r.inheritance));
    if (r.queue != GPUPART_SMLP_SQ) return;
    const TpcMask granted = mask_from_words(r.granted);
    if (granted.empty()) throw broken(path, fmt::format("record {} is in the SQ holding no TPC", index));
    if (!(granted & ~c.tpcs).empty())
        throw broken(path, fmt::format("record {} holds TPCs {} outside the component's {}", index, (granted & ~c.tpcs).to_list(),
                                       c.tpcs.to_list()));
    if (static_cast<unsigned>(granted.count()) != r.granted_tpcs || r.granted_tpcs % c.granularity != 0)
        throw broken(path, fmt::format("record {} says it holds {} TPCs but holds {} ({}), with h = {}", index, r.granted_tpcs,
                                       granted.count(), granted.to_list(), c.granularity));
}

}  // namespace

bool smlp_name_valid(const std::string& name) {
    if (name.empty() || name.size() >= GPUPART_SMLP_NAME_BYTES || name.front() == '.') return false;
    return std::all_of(name.begin(), name.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
    });
}

SmlpComponent smlp_view(const gpupart_smlp_file& file, const std::string& path, unsigned file_owner, bool changing) {
    const gpupart_smlp_component& h = file.header;
    SmlpComponent c;
    c.path = path;
    c.owner = file_owner;
    c.changing = changing;
    // The fixed facts: written once, before the component is LIVE, so even a torn copy has them right.
    if (std::memcmp(h.magic, GPUPART_SMLP_MAGIC, sizeof GPUPART_SMLP_MAGIC) != 0 || h.layout_version != GPUPART_REGISTRY_LAYOUT_VERSION ||
        h.file_size != sizeof(gpupart_smlp_file))
        throw broken(path, "its header is not layout 5's");
    if (h.state != GPUPART_SLOT_LIVE) throw RegistryError(fmt::format("{}: the component is not formed yet", one_line(path)));
    if (h.owner_uid != file_owner)
        throw broken(path, fmt::format("it claims owner uid {} but the file belongs to uid {}", h.owner_uid, file_owner));
    if (h.name[GPUPART_SMLP_NAME_BYTES - 1] != '\0' || !smlp_name_valid(h.name))
        throw broken(path, fmt::format("its name '{}' is not a component name", one_line(field_text(h.name, sizeof h.name))));
    c.name = h.name;
    // "<name>.smlp": what the file name promises, as a slot's name is checked against its header.
    if (const std::string base = path.substr(path.rfind('/') + 1); base != c.name + GPUPART_SMLP_SUFFIX)
        throw broken(path, fmt::format("it calls itself '{}'", c.name));
    // Its masks are TPC numbers only where the header says so; a library from before the numbering wrote
    // launch-descriptor bits, which shown as numbers would name other TPCs (and its programs cannot join it).
    if ((h.flags & GPUPART_SMLP_NUMBERED) == 0)
        throw RegistryError(fmt::format("{}: made before TPC numbers (its TPCs are launch-descriptor bits): not shown; "
                                        "remove it once its programs have ended, they make it anew",
                                        one_line(path)));
    c.gpu = gpupart_uuid_is_zero(&h.gpu) ? "" : uuid_text(h.gpu);
    c.tpcs = mask_from_words(h.tpcs);
    c.size = c.tpcs.count();
    c.granularity = h.h;
    c.fq_length = h.fq_length;
    if (c.size == 0) throw broken(path, "the component has no TPC");
    if (c.granularity == 0 || c.size % static_cast<int>(c.granularity) != 0)
        throw broken(path, fmt::format("its granularity h = {} does not divide H = {}", c.granularity, c.size));
    if (static_cast<unsigned>(c.size) / c.granularity > GPUPART_SMLP_MAX_LEVELS)
        throw broken(path, fmt::format("H/h = {} is more than the {} levels a request holds", c.size / static_cast<int>(c.granularity),
                                       GPUPART_SMLP_MAX_LEVELS));
    if (c.fq_length == 0) throw broken(path, "its FQ length M is 0");
    c.created_ns = h.created_realtime_ns;
    c.satisfied = h.satisfied;
    c.finalized = h.finalized;
    c.reclaimed = h.reclaimed;
    c.inheritance_applied = h.inheritance_applied;
    c.inheritance_refused = h.inheritance_refused;
    c.max_wait_ns = h.max_wait_ns;
    c.free = c.tpcs;
    if (changing) return c;

    TpcMask held;
    for (int i = 0; i < static_cast<int>(GPUPART_SMLP_MAX_REQUESTS); ++i) {
        const gpupart_smlp_request& r = file.requests[i];
        check_record(r, i, c, path);
        if (r.queue == GPUPART_SMLP_FREE) continue;
        SmlpRequest request = request_of(r, i);
        if (request.queue == GPUPART_SMLP_SQ) {
            if (!(held & request.granted).empty())  // Lemma 13: satisfied requests hold disjoint TPCs
                throw broken(path, fmt::format("record {} holds TPCs {} that another holder holds too", i, (held & request.granted).to_list()));
            held |= request.granted;
        }
        (request.queue == GPUPART_SMLP_PQ ? c.pq : request.queue == GPUPART_SMLP_FQ ? c.fq : c.sq).push_back(std::move(request));
    }
    if (c.fq.size() > c.fq_length)
        throw broken(path, fmt::format("{} requests are in the FQ, more than M = {}", c.fq.size(), c.fq_length));
    const auto by_ticket = [](const SmlpRequest& a, const SmlpRequest& b) { return a.ticket != b.ticket ? a.ticket < b.ticket : a.record < b.record; };
    std::sort(c.fq.begin(), c.fq.end(), by_ticket);
    std::sort(c.sq.begin(), c.sq.end(), by_ticket);
    std::sort(c.pq.begin(), c.pq.end(), [&](const SmlpRequest& a, const SmlpRequest& b) {
        return a.priority != b.priority ? a.priority > b.priority : by_ticket(a, b);
    });
    c.free = c.tpcs & ~held;
    return c;
}

const SmlpRequest* SmlpComponent::holder_of(int bit) const {
    for (const SmlpRequest& request : sq)
        if (request.granted.test(bit)) return &request;
    return nullptr;
}

std::string_view to_string(gpupart_smlp_queue queue) {
    switch (queue) {
        case GPUPART_SMLP_FREE: return "free";
        case GPUPART_SMLP_PQ: return "PQ";
        case GPUPART_SMLP_FQ: return "FQ";
        case GPUPART_SMLP_SQ: return "SQ";
    }
    return "?";
}

std::string inheritance_text(const SmlpRequest& request) {
    switch (request.inheritance) {
        case GPUPART_SMLP_INHERIT_NONE: return "";
        case GPUPART_SMLP_INHERIT_APPLIED: return fmt::format("runs at inherited priority {}", request.inherited_priority);
        case GPUPART_SMLP_INHERIT_REFUSED:
            return fmt::format("inheritance of priority {} refused by the OS (no CAP_SYS_NICE or RLIMIT_RTPRIO)", request.inherited_priority);
    }
    return "";
}

std::string smlp_duration_text(std::uint64_t since_ns, std::uint64_t now_ns) {
    if (since_ns == 0 || now_ns < since_ns) return "-";
    const double seconds = static_cast<double>(now_ns - since_ns) / 1e9;
    if (seconds < 1) return fmt::format("{:.0f} ms", seconds * 1e3);
    if (seconds < 60) return fmt::format("{:.1f} s", seconds);
    if (seconds < 3600) return fmt::format("{:.0f} min", seconds / 60);
    return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace gpupart
