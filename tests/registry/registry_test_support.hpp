#pragma once
// Helpers for registry tests: a private registry directory, and forked children that register the way
// the shim does (gpupart_slot_create) and then wait to be told to exit.
#include <initializer_list>
#include <string>
#include <string_view>

#include "registry/slot_file.hpp"

#include <sys/types.h>

#include "registry/registry_layout.h"

namespace gpupart::test {

// The GPU the registry tests' processes are on: the registry's name for GPU 0 of the built-in H200,
// which has no recorded UUID (gpu_key).
inline constexpr const char* kTestGpu = "GPU-00000000-0000-0000-0000-000000000001";


struct TempRegistry {
    TempRegistry();
    ~TempRegistry();
    std::string dir;
};

// A forked child that registers in `dir` with `allowed` (empty = no mask), writes a byte to the parent
// when registered, and exits when the parent closes the pipe. `pid` is the child.
struct RegisteredChild {
    // `gpu`: the GPU (UUID) the mask is for; `job`: its slot's scheduler job ($GPUPART_JOB), none when null.
    RegisteredChild(const std::string& dir, const char* tpcs_hex, const char* gpu = kTestGpu, const char* job = nullptr);
    ~RegisteredChild();
    void finish();  // closes the pipe and reaps the child
    pid_t pid = -1;
    int to_child = -1;
};

// Waits for child `pid` to end: its exit status, or 128 + the signal that killed it.
int wait_exit_code(pid_t pid);

// A control payload with one entry for kTestGpu (no entry when `allowed_hex` is null).
gpupart_control_payload control_with(const char* allowed_hex, const char* real_hex, const char* gpu = kTestGpu);

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

// A mask of TPC numbers (or, for a slot's raw contents, descriptor bits) spelt out in a test.
inline TpcMask tpcs(std::initializer_list<int> numbers) {
    TpcMask mask;
    for (const int number : numbers) mask.set(number);
    return mask;
}

// The mask a control block holds for `gpu` ("all": none, unconfined there).
inline bool has_mask_on(const SlotControl& control, std::string_view gpu = kTestGpu) {
    const GpuControl* entry = control.gpu(gpu);
    return entry != nullptr && entry->has_mask;
}
inline TpcMask allowed_on(const SlotControl& control, std::string_view gpu = kTestGpu) {
    const GpuControl* entry = control.gpu(gpu);
    return entry != nullptr && entry->has_mask ? entry->allowed : TpcMask{};
}

}  // namespace gpupart::test
