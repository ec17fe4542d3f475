#include "sources/rm_reader.hpp"

#include <bit>
#include <cerrno>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "sources/rm_driver_branch.hpp"

namespace gpupart {
namespace {

using rm580::Control;
using rm580::Params;

SourceStatus status_of(SourceState state, std::string detail) { return SourceStatus{Source::rmctrl, state, std::move(detail)}; }

// An OS error as one line: which node, what errno means here.
SourceStatus os_failure(const RmOsError& error) {
    switch (error.error()) {
        case ENOENT:
        case ENXIO:
        case ENODEV:
            return status_of(SourceState::absent, fmt::format("{} (is the NVIDIA driver loaded?)", error.what()));
        case EACCES:
        case EPERM:
            return status_of(SourceState::refused,
                             fmt::format("{} (the device node's mode or group does not admit this user)", error.what()));
        default:
            return status_of(SourceState::failed, error.what());
    }
}

// Asks one control and decodes its reply; a refusal or a reply that cannot be right becomes the
// answer's reason, so one failing control costs only its own facts.
class Asker {
public:
    Asker(RmClient& client, bool as_root) : client_(client), as_root_(as_root) {}

    template <typename T, typename Decode>
    RmAnswer<T> ask(const Control& control, Params params, Decode decode, bool root_only = false) {
        if (root_only && !as_root_) return RmAnswer<T>::failed("needs root");
        const std::uint32_t status = client_.control(control.cmd, params);
        if (status != rm::kOk) return RmAnswer<T>::failed(fmt::format("{}: {}", control.name, rm::status_name(status)));
        try {
            return RmAnswer<T>{decode(rm580::Reply(params)), {}};
        } catch (const rm::DecodeError& error) {
            return RmAnswer<T>::failed(fmt::format("{}: unexpected reply: {}", control.name, error.what()));
        }
    }

private:
    RmClient& client_;
    bool as_root_;
};

constexpr std::uint32_t kEngineSw = 0x22;  // the software engine has no runlist

RmAnswer<RmGpcMap> gpc_map_of(Asker& asker, int logical_gpcs) {
    std::vector<rm580::GrfsQuery> queries;
    for (int gpc = 0; gpc < logical_gpcs; ++gpc) {
        queries.push_back({rm580::kGrfsChipletGpcMap, static_cast<std::uint32_t>(gpc)});
        queries.push_back({rm580::kGrfsTpcMask, static_cast<std::uint32_t>(gpc)});
    }
    return asker.ask<RmGpcMap>(rm580::kGrmgrGetGrFsInfo, rm580::grfs_request(queries), [](rm580::Reply reply) {
        RmGpcMap map;
        for (const auto& answer : rm580::decode_grfs(reply)) {
            if (answer.status != rm::kOk)
                throw rm::DecodeError(fmt::format("query {} for GPC {}: {}", answer.type, answer.gpc, rm::status_name(answer.status)));
            if (answer.type == rm580::kGrfsChipletGpcMap) map.physical_of_logical[static_cast<int>(answer.gpc)] = static_cast<int>(answer.value);
            if (answer.type == rm580::kGrfsTpcMask) map.tpc_mask_of_logical[static_cast<int>(answer.gpc)] = answer.value;
        }
        return map;
    });
}

void read_graphics(Asker& asker, RmFacts& facts) {
    facts.gr_info = asker.ask<std::map<std::uint32_t, std::uint32_t>>(
        rm580::kGrGetInfoV2,
        rm580::gr_info_request({rm580::kGrInfoLitterNumGpcs, rm580::kGrInfoLitterNumTpcPerGpc, rm580::kGrInfoLitterNumSmPerTpc,
                                rm580::kGrInfoSmVersion, rm580::kGrInfoShaderPipeSubCount}),
        rm580::decode_gr_info);
    facts.gpc_mask = asker.ask<std::uint32_t>(rm580::kGrGetGpcMask, rm580::request(rm580::kGrGetGpcMask), rm580::decode_gpc_mask);
    if (!facts.gpc_mask.ok()) return;
    const std::uint32_t mask = *facts.gpc_mask.value;
    for (int gpc = 0; gpc < 32; ++gpc)
        if (mask & (1u << gpc))
            facts.tpc_mask[gpc] = asker.ask<std::uint32_t>(rm580::kGrGetTpcMask, rm580::tpc_mask_request(gpc), rm580::decode_tpc_mask);
    const int logical_gpcs = std::popcount(mask);
    for (int gpc = 0; gpc < logical_gpcs; ++gpc)
        facts.tpc_count[gpc] = asker.ask<std::uint32_t>(rm580::kGrGetNumTpcsForGpc, rm580::num_tpcs_request(gpc), rm580::decode_num_tpcs);
    facts.gpc_map = gpc_map_of(asker, logical_gpcs);
    facts.sm_order = asker.ask<rm580::SmOrder>(rm580::kGrGetGlobalSmOrder, rm580::request(rm580::kGrGetGlobalSmOrder),
                                               rm580::decode_sm_order);
}

void read_engines(Asker& asker, RmFacts& facts) {
    facts.engines = asker.ask<std::vector<std::uint32_t>>(rm580::kGpuGetEnginesV2, rm580::request(rm580::kGpuGetEnginesV2),
                                                          rm580::decode_engines);
    facts.fifo_info = asker.ask<std::map<std::uint32_t, std::uint32_t>>(
        rm580::kFifoGetInfo,
        rm580::fifo_info_request({rm580::kFifoMaxChannelGroups, rm580::kFifoMaxChannelsPerGroup, rm580::kFifoChannelGroupsInUse}, 0),
        rm580::decode_fifo_info);
    if (!facts.engines.ok()) return;
    const std::vector<std::uint32_t>& engines = *facts.engines.value;
    facts.runlist_of_engine = asker.ask<std::map<std::uint32_t, int>>(
        rm580::kGpuGetEngineRunlistPriBase, rm580::runlist_request(engines),
        [&engines](rm580::Reply reply) {
            std::map<std::uint32_t, int> runlists;
            const auto ids = rm580::decode_runlist_ids(reply, engines.size());
            for (std::size_t i = 0; i < engines.size(); ++i)
                if (ids[i]) runlists[engines[i]] = *ids[i];
            return runlists;
        },
        /*root_only=*/true);
    // CHANNEL_GROUPS_IN_USE_PER_ENGINE counts the TSGs of the engine's channel RAM; with one RAM for all
    // runlists (seen on the H100) that is the whole GPU's count, so it is asked only where RAMs are per runlist.
    facts.per_runlist_channel_ram = asker.ask<bool>(
        rm580::kFifoGetInfo, rm580::fifo_info_request({rm580::kFifoPerRunlistChannelRam}, 0), [](rm580::Reply reply) {
            const auto values = rm580::decode_fifo_info(reply);
            const auto it = values.find(rm580::kFifoPerRunlistChannelRam);
            if (it == values.end()) throw rm::DecodeError("no IS_PER_RUNLIST_CHANNEL_RAM_SUPPORTED in the reply");
            return it->second != 0;
        });
    for (std::uint32_t engine : engines) {
        if (engine == kEngineSw) continue;
        if (facts.per_runlist_channel_ram.value != true) continue;
        facts.tsgs_in_use[engine] = asker.ask<int>(
            rm580::kFifoGetInfo, rm580::fifo_info_request({rm580::kFifoChannelGroupsInUsePerEngine}, engine),
            [](rm580::Reply reply) {
                const auto values = rm580::decode_fifo_info(reply);
                const auto it = values.find(rm580::kFifoChannelGroupsInUsePerEngine);
                if (it == values.end()) throw rm::DecodeError("no CHANNEL_GROUPS_IN_USE_PER_ENGINE in the reply");
                return static_cast<int>(it->second);
            });
    }
    if (!facts.runlist_of_engine.ok()) return;
    std::set<int> runlists;
    for (const auto& [engine, runlist] : *facts.runlist_of_engine.value) runlists.insert(runlist);
    for (int runlist : runlists)
        facts.channels[runlist] = asker.ask<std::vector<int>>(rm580::kFifoGetAllocatedChannels, rm580::allocated_channels_request(runlist),
                                                              rm580::decode_allocated_channels, /*root_only=*/true);
}

void read_copy_engines(Asker& asker, RmFacts& facts) {
    facts.ce_caps = asker.ask<rm580::CeAllCaps>(rm580::kCeGetAllCaps, rm580::request(rm580::kCeGetAllCaps), rm580::decode_ce_all_caps);
    if (!facts.ce_caps.ok()) return;
    for (const auto& [lce, caps] : facts.ce_caps.value->caps) {
        const auto engine_type = rm580::copy_engine_type(lce);
        if (!engine_type) {
            facts.pce_mask[lce] = RmAnswer<std::uint32_t>::failed(fmt::format("LCE{} has no engine type to ask with", lce));
            continue;
        }
        facts.pce_mask[lce] = asker.ask<std::uint32_t>(rm580::kCeGetCePceMask, rm580::pce_mask_request(*engine_type), rm580::decode_pce_mask);
    }
}

std::string ok_detail(const RmFacts& facts, const std::string& control_path) {
    std::string detail = fmt::format("driver {} via {}, GPU {} (/dev/nvidia{})", facts.driver_version, control_path,
                                     facts.card.bus_id, facts.card.minor);
    if (facts.smc_mode.value == rm580::SmcMode::enabled) detail += "; MIG is on: GR topology not read";
    detail += facts.as_root ? "; as root: runlist ids and channels read" : "; runlist ids and allocated channels need root";
    return detail;
}

}  // namespace

RmCardList read_rm_cards(RmTransport& transport) {
    RmCardList list;
    try {
        RmClient client(transport);
        list.driver_version = client.query_driver_version();
        if (const std::string reason = unverified_driver_reason(list.driver_version); !reason.empty()) {
            list.status = status_of(SourceState::unsupported, reason);
            return list;
        }
        list.cards = client.cards();
        list.status = status_of(SourceState::ok, fmt::format("driver {} via {}: {} GPU{}", list.driver_version, transport.control_path(),
                                                             list.cards.size(), list.cards.size() == 1 ? "" : "s"));
    } catch (const RmOsError& error) {
        list.status = os_failure(error);
    } catch (const std::runtime_error& error) {
        list.status = status_of(SourceState::failed, fmt::format("{}: {}", transport.control_path(), error.what()));
    }
    return list;
}

RmReadResult read_rm_facts(RmTransport& transport, const std::string& bus_id, bool as_root) {
    RmReadResult result;
    try {
        RmClient client(transport);
        RmFacts facts;
        facts.as_root = as_root;
        facts.driver_version = client.query_driver_version();  // first: nothing else is asked of an unverified branch
        if (const std::string reason = unverified_driver_reason(facts.driver_version); !reason.empty()) {
            result.status = status_of(SourceState::unsupported, reason);
            return result;
        }
        const auto cards = client.cards();
        const auto card = std::find_if(cards.begin(), cards.end(), [&](const RmCard& c) { return c.bus_id == bus_id; });
        if (card == cards.end()) {
            result.status = status_of(SourceState::failed, fmt::format("driver {} drives no GPU at {} ({} other{})", facts.driver_version,
                                                                        bus_id, cards.size(), cards.size() == 1 ? "" : "s"));
            return result;
        }
        facts.card = *card;
        client.attach(facts.card);
        Asker asker(client, as_root);
        facts.uuid = asker.ask<std::string>(rm580::kGpuGetGidInfo, rm580::gid_request(), rm580::decode_gid);
        facts.name = asker.ask<std::string>(rm580::kGpuGetNameString, rm580::name_request(), rm580::decode_name);
        facts.smc_mode = asker.ask<rm580::SmcMode>(rm580::kGpuGetInfoV2, rm580::gpu_info_request({rm580::kGpuInfoSmcMode}),
                                                   [](rm580::Reply reply) {
                                                       const auto values = rm580::decode_gpu_info(reply);
                                                       const auto it = values.find(rm580::kGpuInfoSmcMode);
                                                       if (it == values.end() || it->second > 4) throw rm::DecodeError("no SMC mode in the reply");
                                                       return static_cast<rm580::SmcMode>(it->second);
                                                   });
        // Under MIG the GR controls answer only inside a GPU instance this client subscribed to.
        if (facts.smc_mode.value != rm580::SmcMode::enabled) read_graphics(asker, facts);
        read_engines(asker, facts);
        read_copy_engines(asker, facts);
        facts.pids = asker.ask<std::vector<int>>(rm580::kGpuGetPids, rm580::pids_request(), rm580::decode_pids);
        result.status = status_of(SourceState::ok, ok_detail(facts, transport.control_path()));
        result.facts = std::move(facts);
    } catch (const RmOsError& error) {
        result.status = os_failure(error);
    } catch (const RmCallError& error) {
        const bool refused = error.status() == rm::kErrInsufficientPermissions;
        result.status = status_of(refused ? SourceState::refused : SourceState::failed,
                                  fmt::format("{}{}", error.what(), refused ? " (this user may not open the GPU)" : ""));
    } catch (const std::runtime_error& error) {
        result.status = status_of(SourceState::failed, fmt::format("{}: {}", transport.control_path(), error.what()));
    }
    return result;
}

}  // namespace gpupart
