#pragma once
// What one topology source said when asked: it answered, or exactly why not. Every reader (RM control,
// probe, NVML, libudev, nvdebug, MMIO) returns one, so `gpupart gpus`, `topology --sources` and the GUI
// can print one line per source and still show everything the other sources gave.
#include <cstdint>
#include <string>
#include <vector>

#include "model/provenance.hpp"

namespace gpupart {

enum class SourceState {
    ok,           // answered; its facts are in the model with this source's provenance
    absent,       // not on this machine (no device node, library or /proc directory)
    refused,      // there but said no (EPERM, mapping refused, NV_ERR_INSUFFICIENT_PERMISSIONS)
    needs_root,   // answers only to root; the facts it would give say "needs root"
    unsupported,  // there, but a version or layout we have not verified (never guessed)
    failed,       // there and allowed, but the call failed (the detail says how)
    not_read,     // not asked: the sources read first gave everything the command needs (the detail says which)
};

struct SourceStatus {
    Source source = Source::inferred;
    SourceState state = SourceState::absent;
    std::string detail;  // one line a user can act on: "/dev/nvidiactl: no such file (driver not loaded?)"
};

// One GPU's entry in the driver's global SM order (RM control GR_GET_GLOBAL_SM_ORDER, or nvdebug's
// CWD_GPC_TPC_ID): which GPC and TPC each SM id belongs to. The probe joins it with the mask bits.
struct SmOrderEntry {
    int sm = 0;               // SM id as %smid reports it
    int logical_gpc = 0;      // gpcId (logical GPC)
    int local_tpc = 0;        // TPC index within that logical GPC
    int global_tpc = 0;       // globalTpcId
    int virtual_gpc = -1;     // -1 when the source does not give it
};

// The enabled slots of a floorsweeping fuse register, which sets one bit per disabled GPC or TPC slot
// (NV_FUSE_STATUS_OPT_*; nvdebug's gpc_mask and gpcN_tpc_mask are the same registers).
constexpr std::uint32_t enabled_slots(std::uint32_t disabled_bits, int slot_count) {
    return ~disabled_bits & (slot_count >= 32 ? ~0u : (1u << slot_count) - 1u);
}

}  // namespace gpupart
