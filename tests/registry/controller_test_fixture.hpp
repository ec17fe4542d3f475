#pragma once
// What the controller tests share: the built-in H200, a private registry with its journal, a controller
// over both, and a process's mask as the registry holds it.
#include <gtest/gtest.h>

#include <string>

#include "controller/controller.hpp"
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

}  // namespace gpupart::test
