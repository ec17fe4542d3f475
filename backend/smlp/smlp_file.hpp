#pragma once
// SMLP components (registry layout 5, smlp_layout.h) as front ends show them: `gpupart smlp`, top's
// components view and the app's SMLP dock. Read-only and lock-free: the file is read with pread and the
// header's `seq` (retried while a locker changes it), never mapped and never locked, so a front end can
// neither block a component nor be blocked by one. Every file is opened as slots are (O_NOFOLLOW,
// O_NONBLOCK, a regular file of exactly the layout's size, owned by its directory's user) and every
// value in it is checked before it is shown: a component that breaks the layout's rules is a problem
// line, never a picture of queues that cannot be.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/tpc_mask.hpp"
#include "platform/process_identity.hpp"
#include "smlp/smlp_layout.h"

namespace gpupart {

// One request record of PQ, FQ or SQ.
struct SmlpRequest {
    int record = 0;                 // its index in the file (records are reused)
    gpupart_smlp_queue queue = GPUPART_SMLP_FREE;
    int pid = 0;
    std::uint64_t start_time = 0;
    int tid = 0;
    int priority = 0;               // higher = more urgent
    std::uint64_t ticket = 0;       // order in its queue
    std::uint64_t issued_ns = 0;    // CLOCK_REALTIME
    std::uint64_t satisfied_ns = 0; // 0 until in the SQ
    TpcMask granted;                // SQ: the TPCs it holds
    unsigned granted_tpcs = 0;
    std::vector<std::uint32_t> levels;  // L_i: levels[k] = length when granted (k+1)*h TPCs
    std::uint32_t tolerance_ppm = 0;
    int inherited_priority = 0;
    gpupart_smlp_inheritance inheritance = GPUPART_SMLP_INHERIT_NONE;
    std::string label;              // as the caller wrote it (valid UTF-8): escape it (one_line) to show it
    Liveness liveness = Liveness::alive;  // not alive: died and not swept yet (its TPCs return at the next change)
};

struct SmlpComponent {
    std::string path;
    std::string name;
    unsigned owner = 0;             // the file's owner, its user directory's
    std::string gpu;                // "GPU-..." or "" when the component does not say
    TpcMask tpcs;                   // L: the component's TPCs
    int size = 0;                   // H: their number
    unsigned granularity = 0;       // h
    unsigned fq_length = 0;         // M
    std::uint64_t created_ns = 0;
    std::uint64_t satisfied = 0, finalized = 0, reclaimed = 0;
    std::uint64_t inheritance_applied = 0, inheritance_refused = 0;
    std::uint64_t max_wait_ns = 0;
    // A locker was changing the file at every try (or died doing so: the next locker repairs it): the
    // queues are not known and are empty here; the component's fixed facts are.
    bool changing = false;
    std::vector<SmlpRequest> pq;    // by priority (highest first), then ticket
    std::vector<SmlpRequest> fq;    // by ticket
    std::vector<SmlpRequest> sq;    // by ticket: the holders
    TpcMask free;                   // tpcs minus the SQ grants

    // The SQ record holding TPC `bit`, or nullptr.
    const SmlpRequest* holder_of(int bit) const;
};

struct SmlpEntry {
    std::string path;
    std::optional<SmlpComponent> component;  // empty: see problem
    std::string problem;                     // one line, escaped
};

// Every "<user dir>/*.smlp" of every trusted user directory of registry root `root`, by name then path.
// .smlp files in untrusted user directories or outside any are entries with a problem; a missing root
// is no component; an unsafe one throws RegistryError.
std::vector<SmlpEntry> list_smlp_components(const std::string& root);

// One component file of the user directory owned by `dir_owner`. Throws RegistryError (one line): not a
// regular file, wrong owner or size, another layout, a name that disagrees with the file's, a value the
// layout does not allow (smlp_queues.cpp).
SmlpComponent read_smlp_component(const std::string& path, unsigned dir_owner);

// The view of a consistent copy of a component file (`changing`: the copy may be torn, only its fixed
// facts are used). Throws RegistryError when a value breaks the layout's rules. (smlp_queues.cpp)
SmlpComponent smlp_view(const gpupart_smlp_file& file, const std::string& path, unsigned file_owner, bool changing);

// Whether `name` is a component name: [A-Za-z0-9_.-]{1,63}, not starting with '.'.
bool smlp_name_valid(const std::string& name);

// Words for front ends.
std::string_view to_string(gpupart_smlp_queue queue);             // "PQ", "FQ", "SQ", "free"
std::string inheritance_text(const SmlpRequest& request);        // "", "priority 9 inherited", "refused by the OS ..."
std::string smlp_duration_text(std::uint64_t since_ns, std::uint64_t now_ns);  // "340 ms", "2.5 s", "3 min"
std::uint64_t realtime_now_ns();

}  // namespace gpupart
