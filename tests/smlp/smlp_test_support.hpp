// Helpers of the SMLP tests (tests/smlp): component files in memory for the pure core, a private registry
// for the API, and child processes that run a function and report through their exit status.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <sys/types.h>

#include <gpupart/smlp.h>

#include "smlp_core.h"

namespace gpupart::smlp_test {

// Reproducible 32-bit random numbers (std::mt19937's result type is wider than its values).
struct Random {
    explicit Random(uint32_t seed) : engine(seed) {}
    uint32_t operator()() { return static_cast<uint32_t>(engine()); }
    std::mt19937 engine;
};

// TPC bits 0..count-1 as four words.
void low_bits(uint32_t count, uint32_t out[4]);
uint32_t popcount(const uint32_t words[4]);

// A component image in memory made by the core (no mutex, no file).
std::unique_ptr<gpupart_smlp_file> make_component(uint32_t tpc_count, uint32_t h, uint32_t fq_length,
                                                  const std::vector<std::vector<uint32_t>>& gpcs = {});

// Issues a request with `levels` at `now` for a made-up process `pid`; returns the record index.
int issue(gpupart_smlp_file& file, int pid, int32_t priority, const std::vector<uint32_t>& levels, uint64_t now,
          uint32_t tolerance_ppm = 0);

// Seed 004's L step function (section 6, request generation): length with j TPCs for a kernel of
// maximum length `longest` that stops gaining past `parallelism` TPCs, for j = h, 2h, ..., H.
std::vector<uint32_t> step_levels(uint32_t longest, uint32_t parallelism, uint32_t h, uint32_t tpc_count);

// A registry directory of its own (mode 01777, so another uid may use it too) named by
// $GPUPART_REGISTRY_DIR while it lives.
class TempRegistry {
public:
    TempRegistry();
    ~TempRegistry();
    TempRegistry(const TempRegistry&) = delete;
    TempRegistry& operator=(const TempRegistry&) = delete;
    std::string root;
    std::string user_dir() const;  // this user's directory in it (made on demand)
private:
    std::string previous_;
    bool had_previous_ = false;
};

gpupart_smlp_config config_of(uint32_t tpc_count, uint32_t h, uint32_t fq_length);

// Runs `body` in a forked child; its return value is the child's exit status (exceptions: 99).
pid_t spawn(const std::function<int()>& body);
// Waits for a child; its exit status, or 128 + signal.
int wait_child(pid_t pid);

// A consistent, validated copy of a component file (pread + seq); fails the test otherwise.
gpupart_smlp_file read_component(const std::string& path);

// One line: non-empty, no newline.
bool one_line(const char* message);

// Polls `condition` every millisecond until it holds or `seconds` pass (a bound against a hang, not a timing).
bool eventually(const std::function<bool()>& condition, double seconds = 20.0);

// A pipe carrying small messages between a test and its children.
struct Pipe {
    Pipe();
    ~Pipe();
    void send(int64_t value) const;
    int64_t receive() const;  // -1 on EOF or after a minute without a message
    int fds[2];
};

}  // namespace gpupart::smlp_test
