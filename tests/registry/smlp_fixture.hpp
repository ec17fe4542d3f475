#pragma once
// SMLP component files and programs' mask blocks made from the layout structs directly (smlp_layout.h,
// registry_layout.h), for the tests of what reads and shows them. Written as the library writes them
// (temporary name, then rename; the mask block through its seqlock), but with whatever values a test
// needs, the layout's rules broken included.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/tpc_mask.hpp"
#include "registry/registry_layout.h"
#include "smlp/smlp_layout.h"

namespace gpupart::test {

struct FixtureRequest {
    gpupart_smlp_queue queue = GPUPART_SMLP_PQ;
    int pid = 0;                  // 0: this process
    std::uint64_t start_time = 0; // 0: the pid's real one (a pid that is gone keeps 0 and reads as not alive)
    int priority = 1;
    std::uint64_t ticket = 1;
    TpcMask granted;              // SQ
    std::string label = "job";
    std::uint32_t levels = 1;     // level_count; the levels are 100, 50, 34, ...
    gpupart_smlp_inheritance inheritance = GPUPART_SMLP_INHERIT_NONE;
    int inherited_priority = 0;
    std::uint64_t issued_ns = 0;  // 0: now
    std::uint64_t satisfied_ns = 0; // SQ; 0: now
};

struct FixtureComponent {
    std::string name = "demo";
    TpcMask tpcs = TpcMask::range(0, 7);
    unsigned h = 1;
    unsigned fq_length = 2;
    std::string gpu;              // "" or "GPU-..."
    std::vector<FixtureRequest> requests;
    bool numbered = true;         // GPUPART_SMLP_NUMBERED: tpcs and grants are TPC numbers (false: a file from before)
};

// The file's bytes, LIVE, owned by this user.
std::unique_ptr<gpupart_smlp_file> make_smlp_file(const FixtureComponent& component);
// Writes `file` as "<user_dir>/<file_name>" (default: the component's name + ".smlp"); returns the path.
std::string write_smlp_file(const std::string& user_dir, const gpupart_smlp_file& file, const std::string& file_name = "");

// What a program publishes about the masks it chose (libgpupart.so), written into a mapped slot's app
// block through its seqlock, as the library does. Masks are ALLOWED sets here, stored as disable masks.
struct FixtureStream {
    std::uint64_t stream = 0;
    TpcMask allowed;
    std::uint64_t launches = 0;
};
struct FixtureAppMasks {
    bool in_use = true;
    bool global_set = false;
    TpcMask global_allowed;
    std::vector<FixtureStream> streams;
    std::uint32_t stream_count_override = 0;  // nonzero: the stream_count written (a hostile value)
    std::uint32_t streams_hidden = 0;
    std::uint64_t app_launches = 0;
    std::uint64_t next_launches = 0;
    std::uint64_t outside_bound = 0;
};
void write_app_masks(gpupart_app_masks& block, const FixtureAppMasks& masks);

// Waits (at most 10 s) until the 32-bit sequence number at `offset` of the file at `path` has moved by
// `changes` writes: a busy writer forked by a test is then known to be writing. False when it never did.
bool wait_for_writes(const std::string& path, std::size_t offset, unsigned changes);

// A forked busy writer that is SIGKILLed and reaped when the test ends, failed assertions included.
struct KilledAtExit {
    explicit KilledAtExit(int child) : pid(child) {}
    ~KilledAtExit();
    KilledAtExit(const KilledAtExit&) = delete;
    KilledAtExit& operator=(const KilledAtExit&) = delete;
    int pid;
};

}  // namespace gpupart::test
