#include "snapshot/snapshot_json.hpp"

namespace gpupart {
namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson provenance_json(const Provenance& from) { return provenance_to_json(from); }

template <typename T>
OrderedJson fact_json(const Fact<T>& fact) {
    OrderedJson out;
    out["value"] = fact.value ? OrderedJson(*fact.value) : OrderedJson(nullptr);
    out["from"] = provenance_json(fact.from);
    if (!fact.unknown_reason.empty()) out["unknown_reason"] = fact.unknown_reason;
    return out;
}

template <typename T>
OrderedJson optional_json(const std::optional<T>& value) {
    return value ? OrderedJson(*value) : OrderedJson(nullptr);
}

OrderedJson gpc_json(const Gpc& gpc) {
    return OrderedJson{{"index", gpc.index},
                {"physical_id", optional_json(gpc.physical_id)},
                {"logical_id", optional_json(gpc.logical_id)},
                {"tpc_slots", gpc.tpc_slots},
                {"from", provenance_json(gpc.from)}};
}

OrderedJson tpc_json(const Tpc& tpc) {
    OrderedJson out{{"mask_bit", optional_json(tpc.mask_bit)}, {"gpc", optional_json(tpc.gpc)}, {"slot", optional_json(tpc.slot)},
             {"sms", tpc.sms}, {"from", provenance_json(tpc.from)}};
    if (!tpc.gpc_note.empty()) out["gpc_note"] = tpc.gpc_note;
    if (!tpc.mask_bit_note.empty()) out["mask_bit_note"] = tpc.mask_bit_note;
    return out;
}

OrderedJson hole_json(const Hole& hole) {
    return OrderedJson{{"mask_bit", hole.mask_bit}, {"gpc", optional_json(hole.gpc)}, {"slot", optional_json(hole.slot)},
                {"from", provenance_json(hole.from)}};
}

OrderedJson channel_json(const Channel& channel) {
    return OrderedJson{{"id", channel.id}, {"pid", optional_json(channel.pid)}, {"from", provenance_json(channel.from)}};
}

OrderedJson tsg_json(const Tsg& tsg) {
    OrderedJson channels = OrderedJson::array();
    for (const Channel& channel : tsg.channels) channels.push_back(channel_json(channel));
    return OrderedJson{{"id", tsg.id}, {"pid", optional_json(tsg.pid)}, {"channels", channels}, {"from", provenance_json(tsg.from)}};
}

}  // namespace

OrderedJson runlist_to_json(const Runlist& runlist) {
    OrderedJson tsgs = OrderedJson::array();
    for (const Tsg& tsg : runlist.tsgs) tsgs.push_back(tsg_json(tsg));
    return OrderedJson{{"id", runlist.id}, {"tsgs", tsgs}, {"tsg_count", fact_json(runlist.tsg_count)},
                {"channel_ids", runlist.channel_ids}, {"from", provenance_json(runlist.from)}};
}

OrderedJson engine_to_json(const Engine& engine) {
    return OrderedJson{{"name", engine.name}, {"kind", std::string(to_string(engine.kind))}, {"instance", engine.instance},
                {"runlist", fact_json(engine.runlist)}, {"tsgs_in_use", fact_json(engine.tsgs_in_use)},
                {"from", provenance_json(engine.from)}};
}

OrderedJson lce_to_json(const LogicalCopyEngine& lce) {
    return OrderedJson{{"index", lce.index}, {"pce_mask", lce.pce_mask}, {"grce", lce.grce}, {"shared", lce.shared},
                {"caps_hex", lce.caps_hex}, {"from", provenance_json(lce.from)}};
}

OrderedJson fifo_to_json(const FifoCounts& fifo) {
    return OrderedJson{{"max_channel_groups", fact_json(fifo.max_channel_groups)},
                {"max_channels_per_group", fact_json(fifo.max_channels_per_group)},
                {"channel_groups_in_use", fact_json(fifo.channel_groups_in_use)}};
}

OrderedJson provenance_to_json(const Provenance& from) {
    return OrderedJson{{"source", std::string(to_string(from.source))}, {"detail", from.detail}};
}

OrderedJson fact_to_json(const Fact<int>& fact) { return fact_json(fact); }

namespace {

OrderedJson process_json(const Process& process) {
    return OrderedJson{{"pid", process.pid},
                {"start_time", optional_json(process.start_time)},
                {"uid", optional_json(process.uid)},
                {"command", process.command},
                {"tpc_mask", process.tpc_mask ? OrderedJson(process.tpc_mask->to_hex_padded()) : OrderedJson(nullptr)},
                {"tpcs", process.tpc_mask ? OrderedJson(process.tpc_mask->to_list()) : OrderedJson(nullptr)},
                {"gpu_memory_bytes", fact_json(process.gpu_memory_bytes)},
                {"from", provenance_json(process.from)}};
}

template <typename T, typename F>
OrderedJson array_of(const std::vector<T>& items, F to_json) {
    OrderedJson out = OrderedJson::array();
    for (const T& item : items) out.push_back(to_json(item));
    return out;
}

}  // namespace

OrderedJson gpu_to_json(const Gpu& gpu) {
    OrderedJson lces = array_of(gpu.copy_engines.lces, lce_to_json);
    return OrderedJson{
        {"index", gpu.index},
        {"name", fact_json(gpu.name)},
        {"uuid", fact_json(gpu.uuid)},
        {"pci_bus_id", fact_json(gpu.pci_bus_id)},
        {"architecture", fact_json(gpu.architecture)},
        {"compute_capability", fact_json(gpu.compute_capability)},
        {"driver_version", fact_json(gpu.driver_version)},
        {"cuda_version", fact_json(gpu.cuda_version)},
        {"sm_count", fact_json(gpu.sm_count)},
        {"descriptor_version", fact_json(gpu.descriptor_version)},
        {"mig_enabled", fact_json(gpu.mig_enabled)},
        {"mask_width", gpu.mask_width},
        {"gpcs", array_of(gpu.gpcs, gpc_json)},
        {"tpcs", array_of(gpu.tpcs, tpc_json)},
        {"holes", array_of(gpu.holes, hole_json)},
        {"engines", array_of(gpu.engines, engine_to_json)},
        {"runlists", array_of(gpu.runlists, runlist_to_json)},
        {"copy_engines", OrderedJson{{"lces", lces}, {"pce_count", fact_json(gpu.copy_engines.pce_count)}}},
        {"fifo", fifo_to_json(gpu.fifo)},
        {"processes", array_of(gpu.processes, process_json)},
        {"notes", gpu.notes},
    };
}

OrderedJson snapshot_to_json(const Snapshot& snapshot) {
    return OrderedJson{{"format", kSnapshotFormatName},
                {"version", Snapshot::kFormatVersion},
                {"captured", snapshot.captured},
                {"description", snapshot.description},
                {"gpus", array_of(snapshot.gpus, gpu_to_json)}};
}

}  // namespace gpupart
