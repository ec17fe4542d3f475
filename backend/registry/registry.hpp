#pragma once
// The registry directory as front ends use it: every registered process with its liveness, finding
// one by pid, changing its mask, and reclaiming the slots of processes that are gone.
#include <optional>
#include <string>
#include <vector>

#include "registry/process_identity.hpp"
#include "registry/slot_file.hpp"

namespace gpupart {

struct RegistryEntry {
    std::string path;
    std::optional<SlotRecord> record;  // empty when the slot could not be read: see problem
    Liveness liveness = Liveness::gone;
    std::string problem;               // one line, e.g. an unknown layout version
};

// Why a slot cannot be trusted as its process's own (file owner differs from the user it claims, or
// from the user running the process); nullopt when it can. Root-owned slots are trusted (root made them).
std::optional<std::string> ownership_problem(const SlotRecord& record);

class Registry {
public:
    explicit Registry(std::string directory);
    static std::string default_directory();  // $GPUPART_REGISTRY_DIR, /run/gpupart, /dev/shm/gpupart

    const std::string& directory() const { return directory_; }

    // Every *.slot file, sorted by pid. A missing directory is an empty registry.
    std::vector<RegistryEntry> list() const;

    // The live registered process `pid`. Throws RegistryError when it is not registered, has exited,
    // or its pid now names another process.
    SlotRecord find_live(int pid) const;

    // What a change expects to find, so that a plan made earlier is never applied to a process that was
    // replaced (start time) or changed by someone else meanwhile (generation).
    struct Expectation {
        std::optional<std::uint64_t> start_time;
        std::optional<std::uint64_t> generation;
    };

    // Changes the mask of live process `pid` (checked again right before writing). Throws RegistryError
    // (not registered, gone, pid reused, permission, expectation not met). The caller validated the mask.
    SlotRecord set_mask(int pid, bool has_mask, const TpcMask& allowed, const TpcMask& real_tpcs,
                        const Expectation& expect = {}) const;

    // Unlinks slots of processes that are gone and that this user may remove; returns how many.
    int collect_garbage() const;

private:
    std::string slot_path_for(int pid) const;
    std::string directory_;
};

}  // namespace gpupart
