#pragma once
// One model of an NVIDIA GPU, filled by interchangeable sources (recorded snapshot, probe, RM
// controls, nvdebug, MMIO, NVML, udev). Plain value types: no Qt, no I/O. Every element says where
// it came from; optional fields are empty when no source could tell, never guessed.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/provenance.hpp"
#include "model/tpc_mask.hpp"

namespace gpupart {

// A GPC as gpupart numbers it: `index` is the position in Gpu::gpcs and the N in "gpcN".
struct Gpc {
    int index = 0;
    std::optional<int> physical_id;  // hardware GPC id, when a source gave it
    std::optional<int> logical_id;   // driver's logical GPC id, when a source gave it
    int tpc_slots = 0;               // TPC positions in the floorplan, holes included
    Provenance from;
    bool operator==(const Gpc&) const = default;
};

// A real TPC. The probe knows it by its launch-descriptor mask bit; the driver's RM controls know it
// by its GPC and slot, with no mask bit (mask_bit empty until the probe is joined, see mask_bit_note).
struct Tpc {
    std::optional<int> mask_bit;  // empty = no source said which mask bit drives this TPC
    std::optional<int> gpc;   // index into Gpu::gpcs; empty = GPC not determined (see gpc_note)
    std::optional<int> slot;  // position inside its GPC's floorplan row
    std::vector<int> sms;     // SM ids (as %smid reports them without MPS)
    Provenance from;
    std::string gpc_note;       // why gpc is empty, or how it was found
    std::string mask_bit_note;  // why mask_bit is empty ("run `gpupart probe`")
    bool operator==(const Tpc&) const = default;
};

// A mask bit with no TPC behind it (floorswept or never present). A kernel allowed only on holes
// never runs, so holes are shown as empty slots and never offered as TPCs.
struct Hole {
    int mask_bit = 0;
    std::optional<int> gpc;
    std::optional<int> slot;
    Provenance from;
    bool operator==(const Hole&) const = default;
};

struct Channel {
    int id = 0;
    std::optional<int> pid;
    Provenance from;
    bool operator==(const Channel&) const = default;
};

// Time-slice group: a context's channels, scheduled together on one runlist.
struct Tsg {
    int id = 0;
    std::optional<int> pid;
    std::vector<Channel> channels;
    Provenance from;
    bool operator==(const Tsg&) const = default;
};

enum class EngineKind { graphics, copy, video_decoder, video_encoder, jpeg, optical_flow, security, sequencer, other };
std::string_view to_string(EngineKind kind);
std::optional<EngineKind> engine_kind_from_string(std::string_view text);

struct Engine {
    std::string name;  // "GR0", "COPY2", "NVDEC0"
    EngineKind kind = EngineKind::other;
    int instance = 0;
    Fact<int> runlist;  // unknown with a reason ("needs root") where no source could tell
    Fact<int> tsgs_in_use;  // channel groups (TSGs) now on this engine's runlist
    Provenance from;
    bool operator==(const Engine&) const = default;
};

struct Runlist {
    int id = 0;
    std::vector<Tsg> tsgs;
    Fact<int> tsg_count;        // channel groups in use, when only the count is readable
    std::vector<int> channel_ids;  // allocated channel ids, when readable (root)
    Provenance from;
    bool operator==(const Runlist&) const = default;
};

// A logical copy engine and the physical copy engines (PCEs) it drives. LCE0/1 are usually the
// graphics copy engines (GRCEs), which may share PCEs with another LCE (Bakita & Anderson, RTAS 2024, rule R8).
struct LogicalCopyEngine {
    int index = 0;
    std::uint32_t pce_mask = 0;
    bool grce = false;     // caps bit GRCE
    bool shared = false;   // caps bit SHARED
    std::string caps_hex;  // raw caps bytes, when a source gave them
    Provenance from;
    bool operator==(const LogicalCopyEngine&) const = default;
};

struct CopyEngines {
    std::vector<LogicalCopyEngine> lces;
    Fact<int> pce_count;
    bool operator==(const CopyEngines&) const = default;
};

// Channel and channel-group limits and use of the whole GPU (RM control FIFO_GET_INFO).
struct FifoCounts {
    Fact<int> max_channel_groups;
    Fact<int> max_channels_per_group;
    Fact<int> channel_groups_in_use;
    bool operator==(const FifoCounts&) const = default;
};

struct Process {
    int pid = 0;
    std::optional<std::uint64_t> start_time;  // field 22 of /proc/PID/stat: pid + start time names a process
    std::optional<int> uid;
    std::string command;
    std::optional<TpcMask> tpc_mask;  // allowed TPCs; empty = not partitioned by gpupart
    Fact<std::uint64_t> gpu_memory_bytes;
    Provenance from;
    bool operator==(const Process&) const = default;
};

struct Gpu {
    int index = 0;
    Fact<std::string> name;
    Fact<std::string> uuid;
    Fact<std::string> pci_bus_id;
    Fact<std::string> architecture;
    Fact<std::string> compute_capability;
    Fact<std::string> driver_version;
    Fact<std::string> cuda_version;
    Fact<int> sm_count;
    Fact<int> descriptor_version;  // launch descriptor (QMD/TMD) version byte, e.g. 0x40 on Hopper
    // Where the driver keeps each stream's TPC mask in its stream object, as `gpupart probe` verified it on
    // this GPU and driver (docs/launch-path.md). Live only: a recording never carries it.
    Fact<int> stream_mask_offset;
    Fact<bool> mig_enabled;
    int mask_width = TpcMask::kWidth;  // descriptor mask bits: 128 from V04_00 (Hopper), 64 before

    std::vector<Gpc> gpcs;
    std::vector<Tpc> tpcs;    // sorted by mask bit
    std::vector<Hole> holes;  // sorted by mask bit
    std::vector<Engine> engines;
    std::vector<Runlist> runlists;
    CopyEngines copy_engines;
    FifoCounts fifo;
    std::vector<Process> processes;  // processes using the GPU (from the driver or NVML)
    std::vector<std::string> notes;  // things a reader must know about this record, one line each

    bool operator==(const Gpu&) const = default;
};

struct Snapshot {
    // 2: processes' masks are TPC numbers. 1: launch-descriptor bits (read through the recorded GPU's map).
    static constexpr int kFormatVersion = 2;
    static constexpr int kBitsFormatVersion = 1;
    std::string captured;     // ISO date or date-time of the recording
    std::string description;  // one line: what this snapshot is
    std::vector<Gpu> gpus;
    bool operator==(const Snapshot&) const = default;
};

}  // namespace gpupart
