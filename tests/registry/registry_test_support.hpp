#pragma once
// Helpers for registry tests: a private registry directory, and forked children that register the way
// the shim does (gpupart_slot_create) and then wait to be told to exit.
#include <string>

#include <sys/types.h>

#include "registry/registry_layout.h"

namespace gpupart::test {

struct TempRegistry {
    TempRegistry();
    ~TempRegistry();
    std::string dir;
};

// A forked child that registers in `dir` with `allowed` (empty = no mask), writes a byte to the parent
// when registered, and exits when the parent closes the pipe. `pid` is the child.
struct RegisteredChild {
    RegisteredChild(const std::string& dir, const char* tpcs_hex);
    ~RegisteredChild();
    void finish();  // closes the pipe and reaps the child
    pid_t pid = -1;
    int to_child = -1;
};

gpupart_control control_with(const char* allowed_hex, const char* real_hex);

// This user's directory in registry root `root` (made if missing), where the shim would register.
std::string user_dir_in(const std::string& root);

// A slot file mapped the way the shim maps it, for tests of the memory protocol (front ends never map).
struct MappedSlot {
    MappedSlot(const std::string& path, bool writable);
    ~MappedSlot();
    MappedSlot(const MappedSlot&) = delete;
    MappedSlot& operator=(const MappedSlot&) = delete;
    gpupart_slot_file* slot = nullptr;
};

}  // namespace gpupart::test
