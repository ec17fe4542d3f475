#pragma once
// The masks a program chooses itself through libgpupart.so (registry layout 5: the slot's `app` block), as
// front ends show them. The layout stores libsmctrl's DISABLE masks (set bit = TPC not used); everywhere
// else gpupart shows ALLOWED TPC sets, so the conversion is made here, once, and every front end shows
// allowed sets (JSON gives the raw disable masks too, named so). How a program's choice combines with the
// operator's mask is decision 2 of docs/registry-layout-5.md; effective_tpcs() is that rule.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/tpc_mask.hpp"
#include "registry/registry_layout.h"

namespace gpupart {

struct AppStreamMask {
    std::uint64_t stream = 0;    // the CUstream handle (0: the legacy default stream)
    TpcMask disable;             // as the slot stores it (libsmctrl's form)
    std::uint64_t launches = 0;  // launches on this stream that used its mask
    TpcMask allowed() const { return ~disable; }
};

struct SlotAppMasks {
    bool in_use = false;       // the program called the API at least once
    // A write was in progress at every try (or the process died in one): the masks are not known; the
    // flags and counters (outside the seqlock) are.
    bool publishing = false;
    bool global_set = false;   // else: the program's global choice is every TPC
    // The masks are TPC numbers: the shim stored them so (GPUPART_APP_NUMBERED), or a registry read translated
    // them with the map of the process's one GPU. Else descriptor bits (an older shim; a process on several GPUs).
    bool numbered = false;
    TpcMask global_disable;
    std::vector<AppStreamMask> streams;
    std::uint32_t streams_hidden = 0;  // streams with a mask that did not fit in the slot
    std::uint64_t app_launches = 0;    // launches whose mask the program chose (global, stream or next)
    std::uint64_t next_launches = 0;   // ... of which from a next-launch mask
    std::uint64_t outside_bound = 0;   // ... whose choice had no TPC inside the operator's mask
    std::uint64_t unmapped_launches = 0; // ... on a GPU without a usable GPC map: ran without the choice
    // One line when the block holds a value the layout does not allow (it was clamped); else empty.
    std::string problem;

    TpcMask global_allowed() const { return global_set ? ~global_disable : ~TpcMask{}; }
};

// The block as read (a consistent copy, or nullopt when none was seen) and its live counters.
// Never trusts a value: stream_count over GPUPART_APP_STREAMS is clamped and said in `problem`.
SlotAppMasks app_masks_of(const std::optional<gpupart_app_masks>& consistent, const gpupart_app_masks& latest);

// What a launch whose program-chosen allowed set is `chosen` runs on, on a GPU where the operator's mask
// is `bound` (nullopt: no operator mask) and the real TPCs are `real` (nullopt: this front end does not
// know them): chosen AND bound; where that holds no real TPC, the operator's mask alone (every TPC
// without one), and the launch counts in outside_bound.
struct EffectiveTpcs {
    TpcMask tpcs;
    bool outside_bound = false;
};
EffectiveTpcs effective_tpcs(const TpcMask& chosen, const std::optional<TpcMask>& bound, const std::optional<TpcMask>& real);

// One line of a process's details: the global choice, then each stream's, each with what it runs on.
struct AppMaskRow {
    std::string what;                      // "global", "stream default", "stream 0x7f3a1c000b20"
    bool set = true;                       // the global row: a global mask is set (else every TPC)
    TpcMask chosen;                        // the allowed set the program chose
    EffectiveTpcs effective;               // under the operator's mask
    std::optional<std::uint64_t> launches; // stream rows: launches that used the stream's mask
};
std::vector<AppMaskRow> app_mask_rows(const SlotAppMasks& app, const std::optional<TpcMask>& bound, const std::optional<TpcMask>& real);
// "global 0-7 → 0-3" / "stream 0x7f.. all but 3 → 0-3 (outside the bound: on the operator's mask) · 120 launches".
std::string app_mask_row_text(const AppMaskRow& row, const std::optional<TpcMask>& real);

// An allowed set as gpupart prints masks: its real TPCs as a list ("0-7"; "(none)"), or where the real
// TPCs are not known, "all" (every bit), "all but 3,9" (a disable mask's few bits), else the list.
std::string allowed_text(const TpcMask& allowed, const std::optional<TpcMask>& real);

// A stream handle: "default" for the legacy default stream (0), else "0x7f3a1c000b20".
std::string stream_text(std::uint64_t stream);

// One line for lists and status lines: "global 0-7 · 2 streams · 1200 launches (3 outside the bound)".
std::string app_masks_summary(const SlotAppMasks& app, const std::optional<TpcMask>& real);

}  // namespace gpupart
