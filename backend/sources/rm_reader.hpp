#pragma once
// Reads one GPU through the driver's RM controls (no privilege, no kernel module of ours): the driver
// version first, then client -> device -> subdevice and every control of rm_controls.hpp.
// Failures of the source as a whole come back as a SourceStatus line; a single control that fails
// leaves only its facts unknown, with the reason.
#include <optional>
#include <string>

#include "sources/rm_facts.hpp"
#include "sources/rm_transport.hpp"
#include "sources/source_status.hpp"

namespace gpupart {

struct RmReadResult {
    SourceStatus status;
    std::optional<RmFacts> facts;  // set when status.state is ok
};

// `bus_id` names the GPU ("0000:00:06.0"). `as_root`: the caller has CAP_SYS_ADMIN, so the
// root-only controls (runlist ids, allocated channels) are asked; otherwise they say "needs root".
RmReadResult read_rm_facts(RmTransport& transport, const std::string& bus_id, bool as_root);

// The first step alone, for `gpupart gpus`: the driver version and the GPUs it drives.
struct RmCardList {
    SourceStatus status;
    std::string driver_version;
    std::vector<RmCard> cards;
};
RmCardList read_rm_cards(RmTransport& transport);

}  // namespace gpupart
