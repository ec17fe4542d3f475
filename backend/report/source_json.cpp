#include "report/source_json.hpp"

#include <fmt/format.h>

#include "sources/source_status_text.hpp"

namespace gpupart {
namespace {

using json = nlohmann::ordered_json;

template <typename T>
json fact(const Fact<T>& f) {
    if (f.known()) return json(*f.value);
    return json{{"unknown", f.unknown_reason}};
}

template <typename T>
json hex_fact(const Fact<T>& f) {
    if (f.known()) return json(fmt::format("{:#x}", *f.value));
    return json{{"unknown", f.unknown_reason}};
}

template <typename T>
json optional_value(const std::optional<T>& value) {
    return value ? json(*value) : json(nullptr);
}

}  // namespace

json to_json(const NvmlFacts& facts) {
    json devices = json::array();
    for (const NvmlDevice& d : facts.devices) {
        json processes = json::array();
        for (const NvmlProcess& p : d.processes)
            processes.push_back({{"pid", p.pid},
                                 {"name", p.name},
                                 {"used_memory_bytes", fact(p.used_memory_bytes)},
                                 {"mps_server", p.mps_server},
                                 {"mps_clients", p.mps_clients}});
        devices.push_back({{"index", d.index},
                           {"name", fact(d.name)},
                           {"uuid", fact(d.uuid)},
                           {"pci_bus_id", fact(d.pci_bus_id)},
                           {"sm_count", fact(d.sm_count)},
                           {"memory_total_bytes", fact(d.memory_total_bytes)},
                           {"memory_used_bytes", fact(d.memory_used_bytes)},
                           {"gpu_utilization_percent", fact(d.gpu_utilization_percent)},
                           {"memory_utilization_percent", fact(d.memory_utilization_percent)},
                           {"sm_clock_mhz", fact(d.sm_clock_mhz)},
                           {"max_sm_clock_mhz", fact(d.max_sm_clock_mhz)},
                           {"memory_clock_mhz", fact(d.memory_clock_mhz)},
                           {"mig_enabled", fact(d.mig_enabled)},
                           {"mig_pending", fact(d.mig_pending)},
                           {"processes", d.processes_unknown.empty() ? processes : json{{"unknown", d.processes_unknown}}}});
    }
    return {{"status", source_status_to_json(facts.status)}, {"driver_version", fact(facts.driver_version)}, {"gpus", devices}};
}

json to_json(const MpsFacts& mps) {
    json clients = json::object();
    for (const auto& [server, pids] : mps.clients) clients[std::to_string(server)] = pids;
    return {{"running", mps.state.control_running},
            {"pipe_directory", mps.state.pipe_directory},
            {"server_pids", mps.state.server_pids},
            {"clients", mps.clients_unknown.empty() ? clients : json{{"unknown", mps.clients_unknown}}},
            {"static_partitioning", mps.state.static_partitioning},
            {"detail", mps.state.detail}};
}

json to_json(const UdevFacts& facts) {
    json gpus = json::array();
    for (const UdevGpu& g : facts.gpus)
        gpus.push_back({{"bus_id", g.bus_id},
                        {"device_id", g.device_id},
                        {"class", g.pci_class},
                        {"driver", g.driver},
                        {"device_nodes", g.device_nodes},
                        {"syspath", g.from.detail}});
    return {{"status", source_status_to_json(facts.status)}, {"gpus", gpus}};
}

json to_json(const NvdebugFacts& facts) {
    json tpcs = json::object();
    for (const auto& [gpc, mask] : facts.enabled_tpcs) tpcs[std::to_string(gpc)] = hex_fact(mask);
    json cwd = json::array();
    for (const NvdebugCwdTpc& t : facts.cwd_tpcs)
        cwd.push_back({{"tpc", t.global_tpc}, {"gpc", t.gpc}, {"local_tpc", t.local_tpc}, {"first_sm", optional_value(t.first_sm)}});
    json engines = json::array();
    if (facts.engines.known())
        for (const NvdebugEngine& e : *facts.engines.value)
            engines.push_back({{"type", optional_value(e.engine_type)},
                               {"name", e.type_name},
                               {"instance", optional_value(e.instance)},
                               {"runlist_id", optional_value(e.runlist_id)},
                               {"runlist_engine_id", optional_value(e.runlist_engine_id)},
                               {"runlist_pri_base", e.runlist_pri_base ? json(fmt::format("{:#x}", *e.runlist_pri_base)) : json(nullptr)}});
    json links = json::array();
    if (facts.copy_links.known())
        for (const NvdebugCopyLink& l : *facts.copy_links.value)
            links.push_back(fmt::format("{} -> {}{:02}", l.from, l.to == NvdebugCopyLink::To::pce ? "PCE" : "LCE", l.to_index));
    json runlists = json::array();
    for (const NvdebugRunlistFile& file : facts.runlists) {
        json tsgs = json::array();
        if (file.runlist.known())
            for (const NvdebugTsg& tsg : file.runlist.value->tsgs) {
                json channels = json::array();
                for (const NvdebugChannel& c : tsg.channels) channels.push_back(c.id);
                tsgs.push_back({{"id", tsg.id}, {"length", tsg.length}, {"channels", channels}});
            }
        runlists.push_back({{"index", file.index}, {"tsgs", file.runlist.known() ? tsgs : json{{"unknown", file.runlist.unknown_reason}}}});
    }
    return {{"status", source_status_to_json(facts.status)},
            {"directory", facts.directory},
            {"gpc_slots", fact(facts.gpc_slots)},
            {"tpc_slots_per_gpc", fact(facts.tpc_slots_per_gpc)},
            {"copy_engines", fact(facts.copy_engine_count)},
            {"enabled_gpcs", hex_fact(facts.enabled_gpcs)},
            {"enabled_tpcs", tpcs},
            {"cwd_tpcs", facts.cwd_unknown.empty() ? cwd : json{{"unknown", facts.cwd_unknown}}},
            {"engines", facts.engines.known() ? engines : json{{"unknown", facts.engines.unknown_reason}}},
            {"copy_topology", facts.copy_links.known() ? links : json{{"unknown", facts.copy_links.unknown_reason}}},
            {"pce_map", hex_fact(facts.pce_map)},
            {"runlists", runlists}};
}

json to_json(const MmioFacts& facts) {
    json tpcs = json::object();
    for (const auto& [gpc, mask] : facts.enabled_tpcs) tpcs[std::to_string(gpc)] = hex_fact(mask);
    json engines = json::array();
    if (facts.engines.known())
        for (const MmioEngine& e : *facts.engines.value)
            engines.push_back({{"type", e.type},
                               {"name", e.type_name},
                               {"instance", e.instance},
                               {"is_engine", e.is_engine},
                               {"runlist_engine_id", optional_value(e.runlist_engine_id)},
                               {"runlist_pri_base", e.runlist_pri_base ? json(fmt::format("{:#x}", *e.runlist_pri_base)) : json(nullptr)}});
    json runlists = json::array();
    for (const MmioRunlist& r : facts.runlists)
        runlists.push_back({{"pri_base", fmt::format("{:#x}", r.pri_base)},
                            {"id", fact(r.id)},
                            {"channel_slots", fact(r.channel_slots)},
                            {"allocated_channels", fact(r.allocated_channels)},
                            {"engines", r.engine_indexes}});
    json copy = json::array();
    if (facts.copy_engines.known())
        for (const MmioCopyEngine& c : *facts.copy_engines.value)
            copy.push_back({{"lce", c.lce}, {"pce_mask", fmt::format("{:#x}", c.pce_mask)}, {"shares_lce", optional_value(c.shares_lce)}});
    return {{"status", source_status_to_json(facts.status)},
            {"architecture", hex_fact(facts.architecture)},
            {"gpc_slots", fact(facts.gpc_slots)},
            {"tpc_slots_per_gpc", fact(facts.tpc_slots_per_gpc)},
            {"enabled_gpcs", hex_fact(facts.enabled_gpcs)},
            {"enabled_tpcs", tpcs},
            {"engines", facts.engines.known() ? engines : json{{"unknown", facts.engines.unknown_reason}}},
            {"runlists", runlists},
            {"pce_map", hex_fact(facts.pce_map)},
            {"copy_engines", facts.copy_engines.known() ? copy : json{{"unknown", facts.copy_engines.unknown_reason}}}};
}

}  // namespace gpupart
