#pragma once
// What the hostile tests share: a private scratch directory, real test users (root only), and running
// a gpupart command with a deadline, so a test that would hang fails instead.
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace gpupart::hostile {

// A fresh directory under /tmp (mode 0755), removed with everything in it at the end.
struct ScratchDir {
    ScratchDir();
    ~ScratchDir();
    std::string path;
    std::string operator/(const std::string& name) const { return path + "/" + name; }
};

// A real local user made with useradd for the length of a test (home-less, no login shell), deleted
// again with userdel. `group` names an existing primary group ("" = the user's own). Needs root.
struct TestUser {
    explicit TestUser(const std::string& name, const std::string& group = "");
    ~TestUser();
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
};

bool is_root();

// A demo worker (it registers as the shim does, on TPC bits 0-3) running as `user` until killed, with the
// environment entries `env` ("NAME=value") and `name` in its command line (default: the user's name).
pid_t start_worker_as(const TestUser& user, const std::vector<std::string>& env, const std::string& name = "");

// The whole content of a file ("" when it cannot be read): what a victim's file holds after an attack.
std::string slurp(const std::string& path);

struct Outcome {
    bool timed_out = false;
    int exit_code = -1;  // -1: killed by a signal (see signal)
    int signal = 0;
    std::string out;
    std::string err;
};

// Runs argv with extra environment entries ("NAME=value"), as `user` (nullopt: ourselves), stdin from
// /dev/null, killed (and reported timed_out) after `timeout_ms`.
Outcome run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
            std::optional<uid_t> user = std::nullopt, std::optional<gid_t> group = std::nullopt,
            int timeout_ms = 10000);

// The gpupart CLI under test with the arguments; environment GPUPART_REGISTRY_DIR/GPUPART_JOURNAL come
// from `env`.
Outcome gpupart(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                std::optional<uid_t> user = std::nullopt, std::optional<gid_t> group = std::nullopt,
                int timeout_ms = 10000);

}  // namespace gpupart::hostile
