#pragma once
// The GPU's topology read straight from its registers (BAR0), with the published layouts of
// mmio_registers.hpp: GPC/TPC floorsweeping (fuses), the device-info table (engines and their runlist
// RAM), each runlist's id and allocated channels (channel RAM), and the copy-engine wiring (PCE->LCE and
// the GRCEs' sharing). Decoding works on any RegisterSource: a live BAR0 mapping (root, and refused on our
// test machines) or a register image file.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/provenance.hpp"
#include "sources/mmio_image.hpp"
#include "sources/source_status.hpp"

namespace gpupart {

struct MmioEngine {
    int type = 0;           // NV_PTOP_DEVICE_INFO_TYPE_ENUM
    std::string type_name;  // "GRAPHICS", "LCE", ... or "type 22" for a value NVIDIA has not published
    int instance = 0;
    int fault_id = 0;
    int reset_id = 0;
    std::uint32_t pri_base = 0;
    bool is_engine = false;  // has a runlist
    std::optional<int> runlist_engine_id;
    std::optional<std::uint32_t> runlist_pri_base;
};

struct MmioRunlist {
    std::uint32_t pri_base = 0;  // its runlist RAM in BAR0
    Fact<int> id;                // NV_RUNLIST_DOORBELL_CONFIG_ID
    Fact<int> channel_slots;     // 1 << NUM_CHANNELS_LOG2
    Fact<std::vector<int>> allocated_channels;  // channel RAM entries marked IN_USE
    std::vector<int> engine_indexes;  // into MmioFacts::engines
};

struct MmioCopyEngine {
    int lce = 0;
    std::uint32_t pce_mask = 0;         // PCEs assigned to this LCE (for a sharing GRCE: those of the LCE it shares)
    std::optional<int> shares_lce;      // GRCE0/1 (LCE0/1) that share another LCE's PCEs
};

struct MmioFacts {
    SourceStatus status;
    Fact<int> architecture;  // NV_PMC_BOOT_0 ARCHITECTURE: 0x17 Ampere, 0x18 Hopper, 0x19 Ada
    Fact<int> implementation;
    Fact<int> gpc_slots;
    Fact<int> tpc_slots_per_gpc;
    Fact<std::uint32_t> enabled_gpcs;                 // physical GPCs
    std::map<int, Fact<std::uint32_t>> enabled_tpcs;  // physical GPC -> its TPC slots that are present
    Fact<std::vector<MmioEngine>> engines;
    std::vector<MmioRunlist> runlists;  // one per runlist RAM, in device-info order
    Fact<std::uint32_t> pce_map;
    Fact<std::vector<MmioCopyEngine>> copy_engines;
};

// Decodes `registers`. status: ok, unsupported (an architecture whose layouts are not the published
// Ampere+ ones, in one line), failed (a register the decoding needs is missing from an image: the facts
// that needed it are unknown with that reason, the rest are kept).
MmioFacts decode_mmio(const RegisterSource& registers);

// Live: maps BAR0 of `bus_id` and decodes it; where the mapping is refused the status says so in one line.
MmioFacts read_mmio(const std::string& bus_id, const std::string& sysfs_root = "/sys");

// From a register image file (`--mmio-image`). Throws UserError when the file is unreadable or malformed.
MmioFacts read_mmio_image(const std::string& path);

}  // namespace gpupart
