#pragma once
// What the controller tests share: the built-in H200, a private registry with its journal, a controller
// over both, and a process's mask as the registry holds it; and, for the registry tests as well, the test
// process registered the way the shim registers.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

#include "controller/controller.hpp"
#include "registry/registry_slot.h"
#include "registry_test_support.hpp"
#include "snapshot/snapshot_file.hpp"

namespace gpupart::test {

inline const Gpu& builtin_h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

struct ControllerFixture : ::testing::Test {
    TempRegistry registry_dir;
    std::string journal_path = registry_dir.dir + "/history.jsonl";
    Controller make() const { return Controller(Registry(registry_dir.dir), builtin_h200(), Journal(journal_path)); }
    // The registry as front ends use it: slots' descriptor bits read and written as the H200's TPC numbers.
    Registry numbered_registry() const { return Registry(registry_dir.dir, builtin_h200()); }
    // A process's mask as its slot holds it, in launch-descriptor bits (read without the GPU's map): what the
    // shim applies, so a test checks that a change in TPC numbers reached the process as the right bits.
    // "all" for a process with no partition
    std::string mask_of(int pid) const {
        const auto record = Registry(registry_dir.dir).find_live(pid);
        return record.control && has_mask_on(*record.control) ? allowed_on(*record.control).to_list() : "all";
    }
};

// The fixture of test_controller.cpp and test_controller_rules.cpp: one class, so that GoogleTest keeps their
// tests in one suite (ControllerTest); h200() is the GPU they plan for.
struct ControllerTest : ControllerFixture {
    static const Gpu& h200() { return builtin_h200(); }
};

// Registers the calling process itself (the test), as the shim would; the path of its slot file.
inline std::string register_self(const std::string& dir, std::uint64_t start_time, const char* allowed = nullptr) {
    const gpupart_control_payload initial = control_with(allowed, "0xffffffffffffffffffffffffffffffff");
    gpupart_slot_file* slot = nullptr;
    char path[512];
    EXPECT_EQ(gpupart_slot_create(user_dir_in(dir).c_str(), ::getpid(), start_time, ::getuid(), "test-self", "test", "", nullptr, &initial, &slot,
                                  path, sizeof path),
              0);
    ::munmap(slot, GPUPART_SLOT_FILE_SIZE);
    return path;
}

}  // namespace gpupart::test
