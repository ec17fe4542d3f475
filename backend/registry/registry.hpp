#pragma once
// The registry directory as front ends use it: every registered process with its liveness, finding
// one by pid, changing its mask, and reclaiming the slots of processes that are gone.
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "platform/process_identity.hpp"
#include "registry/slot_file.hpp"
#include "registry/slot_numbering.hpp"

namespace gpupart {

struct RegistryEntry {
    std::string path;
    std::optional<SlotRecord> record;  // empty when the slot could not be read: see problem
    Liveness liveness = Liveness::gone;
    std::string problem;               // one line, e.g. an unknown layout version
    std::optional<unsigned> dir_uid;   // the user directory it lies in; nullopt: outside any
    // Other files in its owner's directories that name the same process (pid and start time): copies,
    // never shown as rows of their own (one process is one row whatever the number of files naming it).
    std::size_t copies = 0;
    // Named after a running process of another user: a file in a stranger's directory, which never
    // stands in for that process's slot nor blocks it (shown, with its problem, as what it is).
    bool stranger = false;
};

// Why a slot cannot be trusted as its process's own (file owner differs from the user it claims, or
// from the user running the process); nullopt when it can. Root-owned slots are trusted (root made them).
std::optional<std::string> ownership_problem(const SlotRecord& record);

// The directory of user `uid` under registry root `root` (registry_layout.h): nullopt when there is none
// and not `create`. With `create`, makes the root (only a $GPUPART_REGISTRY_DIR one) and the directory.
// Throws RegistryError (one line) when the root is unsafe or the directory cannot be made.
std::optional<std::string> user_directory(const std::string& root, unsigned uid, bool create);

class Registry {
public:
    // Reads translate slots' descriptor bits into TPC numbers with the maps of `gpus` (slot_numbering.hpp);
    // masks of other GPUs read as descriptor bits, unnumbered, and cannot be changed.
    explicit Registry(std::string directory, const std::vector<Gpu>& gpus = {});
    Registry(std::string directory, const Gpu& gpu) : Registry(std::move(directory), std::vector<Gpu>{gpu}) {}
    // Adds the map of `gpu` for later reads and changes.
    void learn_numbering(const Gpu& gpu);
    const TpcNumberings& numberings() const { return numberings_; }
    static std::string default_directory();  // the root: $GPUPART_REGISTRY_DIR, /run/gpupart, /dev/shm

    const std::string& directory() const { return directory_; }

    // Throws RegistryError (one line) when the root must not be used: a symlink, not a directory, owned
    // by another user, writable without the sticky bit (registry_layout.h). False when it does not exist.
    bool check_root() const;

    // Every process named by *.slot files in user directories, once, sorted by pid; squatted or unsafe
    // user directories and slot files outside user directories are entries with a problem. The slot of a
    // process is the file in its owner's directories that the shim's order finds first (the plain
    // "<prefix><uid>", then its twins by name: gpupart_user_dir); other files naming it there are counted
    // in `copies`, and files naming it in another user's directory are `stranger`. A missing root is an
    // empty registry; an unsafe one throws RegistryError.
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

    // Changes the mask of live process `pid` on GPU `gpu_uuid` (checked again right before writing); its
    // masks on other GPUs stay. `allowed` and `real_tpcs` are TPC numbers, written as that GPU's descriptor
    // bits. Throws RegistryError (not registered, gone, pid reused, permission, expectation not met, the GPU's
    // map not known). The caller validated the mask against that GPU's floorplan.
    SlotRecord set_mask(int pid, const std::string& gpu_uuid, bool has_mask, const TpcMask& allowed, const TpcMask& real_tpcs,
                        const Expectation& expect = {}) const;

    // After changes: waits until the shim of each (pid, generation written) has re-masked the process's CUDA
    // graph execs for it (its re-mask thread's settled generation), so that their next replay pays nothing
    // for the change; at most `budget` in all. A process without that thread, without execs, or gone is not
    // waited for. Returns the pids it stopped waiting for (their execs take the mask at their next launch).
    std::vector<int> wait_for_graph_remasks(const std::vector<std::pair<int, std::uint64_t>>& changes,
                                            std::chrono::milliseconds budget) const;

    // Unlinks slots of processes that are gone and that this user may remove; returns how many. Only
    // slots read whole, whose name agrees with their header, in a trusted user directory.
    int collect_garbage() const;

private:
    std::vector<RegistryEntry> every_file() const;  // one entry per file (list() before choosing one per process)
    std::string slot_path_for(int pid) const;
    void list_user_dir(const std::string& dir, unsigned dir_uid, std::vector<RegistryEntry>& entries) const;
    SlotRecord numbered(SlotRecord record) const;
    std::string directory_;
    TpcNumberings numberings_;
};

}  // namespace gpupart
