#pragma once
// One process's slot file, seen from a front end: open it read-only (anyone) or read-write (its owner,
// the admin group, root), read a consistent copy of every block, and change its mask. Front ends never
// map a slot: they read and write it with pread/pwrite, so a slot truncated or replaced by someone is an
// error message, never a SIGBUS, and a FIFO in its place is refused without blocking.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/tpc_mask.hpp"
#include "model/user_error.hpp"
#include "registry/app_masks.hpp"
#include "registry/registry_layout.h"
#include "registry/writer_lock.hpp"

namespace gpupart {

// A registry problem the user can act on (permission, version, a process that is gone).
class RegistryError : public UserError {
public:
    explicit RegistryError(const std::string& message) : UserError(message) {}
};

// One GPU's mask in the control block (registry layout 4: one entry per GPU, keyed by UUID).
// The slot stores launch-descriptor bits (what the shim writes into descriptors); a SlotFile reads them as
// they are (`numbered` false). Registry reads translate them into TPC numbers with the GPU's map
// (slot_numbering.hpp); an entry of a GPU whose map the reader does not know keeps its bits, unnumbered.
struct GpuControl {
    std::string uuid;        // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
    bool has_mask = false;
    TpcMask allowed;
    TpcMask real_tpcs;       // that GPU's real TPCs as the writer knew them
    bool numbered = false;   // allowed and real_tpcs are TPC numbers (else descriptor bits)
};

struct SlotControl {
    std::uint64_t generation = 0;  // one for the whole process: +1 on every change of any GPU's mask
    std::vector<GpuControl> gpus;
    int writer_pid = 0;
    unsigned writer_uid = 0;
    std::uint64_t written_ns = 0;

    const GpuControl* gpu(std::string_view uuid) const;  // nullptr: unconfined on that GPU
    bool any_mask() const;
};

// One GPU the process has a context on, as the shim applies it there.
struct GpuStatus {
    std::string uuid;
    gpupart_shim_state state = GPUPART_SHIM_WAITING;
    unsigned descriptor_version = 0;
    std::uint64_t applied_generation = 0;
    bool mask_applied = false;
    TpcMask applied;
    bool numbered = false;  // applied is TPC numbers (else descriptor bits)
    std::uint64_t launches = 0;
    std::uint64_t masked_launches = 0;
    std::uint64_t applied_ns = 0;  // when the shim adopted its applied generation here (realtime; 0: never)
    bool publishing = false;  // its entry was being written at every try: the facts above are not known
};

struct SlotStatus {
    gpupart_shim_state state = GPUPART_SHIM_WAITING;  // the process: waiting, active, or a setup failure
    // How its kernels are confined (registry_layout.h); NOT_SAID from older shims or values beyond the known.
    gpupart_launch_path launch_path = GPUPART_LAUNCH_PATH_NOT_SAID;
    std::vector<GpuStatus> gpus;                      // every GPU it has a context on, in first-use order

    const GpuStatus* gpu(std::string_view uuid) const;
};

struct SlotCounters {
    std::uint64_t launches = 0;
    std::uint64_t masked_launches = 0;
    std::uint64_t last_launch_ns = 0;
    std::uint64_t errors = 0;
    std::uint64_t refused_masks = 0;
    std::uint64_t graph_launches = 0;
};

// What the shim publishes about the process's CUDA graphs (registry_layout.h); graph_status.hpp says
// what the numbers mean against the control block.
struct SlotGraphs {
    gpupart_graph_tracking tracking = GPUPART_GRAPHS_NOT_YET;
    std::uint64_t generation = 0;      // the control generation `current` refers to
    std::uint64_t execs = 0;
    std::uint64_t current = 0;
    std::uint64_t unfollowable = 0;
    std::uint64_t device_launch = 0;
    std::uint64_t remasks = 0;
    std::uint64_t remask_failures = 0;
    bool remasker = false;                 // a thread of the shim re-masks execs ahead of their replay
    std::uint64_t settled_generation = 0;  // the control generation that thread last finished a pass at
};

struct SlotRecord {
    std::string path;
    unsigned file_owner = 0;  // who owns the slot file (the kernel's word, unlike the header's uid)
    int pid = 0;
    std::uint64_t start_time = 0;
    unsigned uid = 0;
    std::string command;
    std::string shim_version;
    std::string start_rule;  // where the start mask came from ("GPUPART_TPCS", "profile P rule at line N (uid U)")
    std::string job;         // the scheduler job it belongs to ($GPUPART_JOB: "slurm:<job>.<step>"), "" if none
    std::uint64_t created_ns = 0;
    std::optional<SlotControl> control;  // empty: a live writer was in the middle of a change
    // A writer died in the middle of a change: `control` is the block before it (saved by that writer),
    // which the next change completes first (registry_layout.h).
    bool writer_died = false;
    std::optional<SlotStatus> status;    // always read (per-GPU entries say when they were being published)
    SlotCounters counters;
    SlotGraphs graphs;
    SlotAppMasks app;  // the masks the program chose itself (libgpupart.so; layout 5)
};

// The GPUs a process is on: those with a mask for it and those it has a context on, by UUID, sorted.
std::vector<std::string> gpus_of(const SlotRecord& record);
// Whether the process counts on GPU `uuid`: it has a mask for it or a context on it, or it is on no GPU
// yet (it may still open any, unconfined).
bool counts_on_gpu(const SlotRecord& record, std::string_view uuid);

// The mask was changed after the shim last applied one on GPU `uuid`, where the process has launched a
// kernel: the shim applies it at the next launch there. (Before a first launch nothing is applied to lag.)
bool mask_change_pending(const SlotRecord& record, std::string_view uuid);
// What the shim applied on GPU `uuid`, as `gpupart list` and `gpupart top` print it: "(publishing)", "-"
// (no launch there yet), "(next launch)", "all" (no mask), the TPC list, or "bits:0x..." where the
// reader does not know that GPU's map of TPC numbers.
std::string applied_text(const SlotRecord& record, std::string_view uuid);

std::string_view to_string(gpupart_shim_state state);
std::string uuid_text(const gpupart_gpu_uuid& uuid);
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (case-insensitive) into the layout's words; throws
// RegistryError (one line) for anything else.
gpupart_gpu_uuid uuid_words(std::string_view text);
TpcMask mask_from_words(const std::uint32_t words[4]);
// A mask as lists print it: the TPC numbers, or "bits:0x..." when it is still descriptor bits.
std::string mask_text(const TpcMask& mask, bool numbered);
void mask_to_words(const TpcMask& mask, std::uint32_t words[4]);

class SlotFile {
public:
    // Throws RegistryError: missing, not a slot, unknown layout version, or (write) permission denied.
    static SlotFile open(const std::string& path, bool writable);
    SlotFile(SlotFile&& other) noexcept;
    SlotFile& operator=(SlotFile&&) = delete;
    SlotFile(const SlotFile&) = delete;
    ~SlotFile();

    SlotRecord read() const;

    // Takes the writers' lock (writer_lock.hpp; waiting up to `lock_timeout_ms`; the kernel drops the lock
    // of a writer that dies, and no reader's lock holds it up), completes a dead writer's change (restores its saved block), then publishes the
    // new control block through the seqlock. With `expected_generation`, refuses (RegistryError) when the
    // block's generation is another one by the time the lock is held: a compare-and-set, so a plan made
    // earlier never overwrites a newer change. Returns true when it completed a dead writer's change.
    // The change is to GPU `uuid`'s entry only (added, replaced, or removed when !has_mask); the other
    // GPUs' masks stay as they are. Refuses (RegistryError) a 17th GPU.
    bool write_control(const std::string& uuid, bool has_mask, const TpcMask& allowed, const TpcMask& real_tpcs,
                       std::optional<std::uint64_t> expected_generation = std::nullopt, int lock_timeout_ms = 2000);

    const std::string& path() const { return path_; }

    // Crash-safety tests: called before each of write_control's stores (0, 1, ...) with its index, so a
    // test can SIGKILL the writer at every store. Process-wide; nullptr (the default) for none.
    using StoreHook = void (*)(int store);
    static void set_store_hook_for_test(StoreHook hook);

private:
    SlotFile(std::string path, int fd, bool writable, unsigned owner);
    void lock(int timeout_ms);
    void unlock();
    void read_page(gpupart_slot_file& page) const;
    void store(int index, std::size_t offset, const void* bytes, std::size_t size);
    bool write_lock_held_by_other() const;

    std::string path_;
    int fd_ = -1;
    bool writable_ = false;
    unsigned owner_ = 0;
    std::unique_ptr<WriterLock> lock_;
};

}  // namespace gpupart
