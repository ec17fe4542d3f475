#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "snapshot/json_object_reader.hpp"
#include "snapshot/snapshot_json.hpp"

namespace gpupart {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Reader = JsonObjectReader;

Provenance read_provenance(const OrderedJson& json, const std::string& path) {
    Reader reader(json, path);
    const auto name = reader.get<std::string>("source");
    const auto source = source_from_string(name);
    if (!source) Reader::fail(reader.field_path("source"), fmt::format("unknown source '{}'", name));
    Provenance from{*source, reader.get<std::string>("detail")};
    reader.finish();
    return from;
}

Provenance read_from(Reader& reader) { return read_provenance(reader.child("from"), reader.field_path("from")); }

template <typename T>
Fact<T> read_fact(Reader& parent, const std::string& key) {
    Reader reader(parent.child(key), parent.field_path(key));
    Fact<T> fact;
    fact.value = reader.get_nullable<T>("value");
    fact.from = read_from(reader);
    fact.unknown_reason = reader.get_if_present<std::string>("unknown_reason").value_or("");
    reader.finish();
    return fact;
}

template <typename T, typename F>
std::vector<T> read_array(Reader& parent, const std::string& key, F read_item) {
    const OrderedJson& items = parent.array(key);
    std::vector<T> out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        Reader reader(items[i], fmt::format("{}[{}]", parent.field_path(key), i));
        out.push_back(read_item(reader));
        reader.finish();
    }
    return out;
}

template <typename T>
std::vector<T> read_scalars(Reader& parent, const std::string& key) {
    const OrderedJson& items = parent.array(key);
    std::vector<T> out;
    for (std::size_t i = 0; i < items.size(); ++i)
        out.push_back(Reader::convert<T>(items[i], fmt::format("{}[{}]", parent.field_path(key), i)));
    return out;
}

Gpc read_gpc(Reader& r) {
    return Gpc{r.get<int>("index"), r.get_nullable<int>("physical_id"), r.get_nullable<int>("logical_id"),
               r.get<int>("tpc_slots"), read_from(r)};
}

Tpc read_tpc(Reader& r) {
    Tpc tpc;
    tpc.mask_bit = r.get_nullable<int>("mask_bit");
    tpc.gpc = r.get_nullable<int>("gpc");
    tpc.slot = r.get_nullable<int>("slot");
    tpc.sms = read_scalars<int>(r, "sms");
    tpc.from = read_from(r);
    tpc.gpc_note = r.get_if_present<std::string>("gpc_note").value_or("");
    tpc.mask_bit_note = r.get_if_present<std::string>("mask_bit_note").value_or("");
    return tpc;
}

Hole read_hole(Reader& r) {
    return Hole{r.get<int>("mask_bit"), r.get_nullable<int>("gpc"), r.get_nullable<int>("slot"), read_from(r)};
}

Channel read_channel(Reader& r) { return Channel{r.get<int>("id"), r.get_nullable<int>("pid"), read_from(r)}; }

Tsg read_tsg(Reader& r) {
    Tsg tsg;
    tsg.id = r.get<int>("id");
    tsg.pid = r.get_nullable<int>("pid");
    tsg.channels = read_array<Channel>(r, "channels", read_channel);
    tsg.from = read_from(r);
    return tsg;
}

Runlist read_runlist(Reader& r) {
    Runlist runlist;
    runlist.id = r.get<int>("id");
    runlist.tsgs = read_array<Tsg>(r, "tsgs", read_tsg);
    runlist.tsg_count = read_fact<int>(r, "tsg_count");
    runlist.channel_ids = read_scalars<int>(r, "channel_ids");
    runlist.from = read_from(r);
    return runlist;
}

Engine read_engine(Reader& r) {
    Engine engine;
    engine.name = r.get<std::string>("name");
    const auto kind_name = r.get<std::string>("kind");
    const auto kind = engine_kind_from_string(kind_name);
    if (!kind) Reader::fail(r.field_path("kind"), fmt::format("unknown engine kind '{}'", kind_name));
    engine.kind = *kind;
    engine.instance = r.get<int>("instance");
    engine.runlist = read_fact<int>(r, "runlist");
    engine.tsgs_in_use = read_fact<int>(r, "tsgs_in_use");
    engine.from = read_from(r);
    return engine;
}

LogicalCopyEngine read_lce(Reader& r) {
    return LogicalCopyEngine{r.get<int>("index"), r.get<std::uint32_t>("pce_mask"), r.get<bool>("grce"),
                             r.get<bool>("shared"), r.get<std::string>("caps_hex"), read_from(r)};
}

Process read_process(Reader& r) {
    Process process;
    process.pid = r.get<int>("pid");
    process.start_time = r.get_nullable<std::uint64_t>("start_time");
    process.uid = r.get_nullable<int>("uid");
    process.command = r.get<std::string>("command");
    if (auto hex = r.get_nullable<std::string>("tpc_mask")) {
        process.tpc_mask = TpcMask::parse_hex(*hex);
        if (!process.tpc_mask) Reader::fail(r.field_path("tpc_mask"), fmt::format("'{}' is not a 128-bit hex mask", *hex));
    }
    const auto list = r.get_nullable<std::string>("tpcs");
    if (list != (process.tpc_mask ? std::optional(process.tpc_mask->to_list()) : std::nullopt))
        Reader::fail(r.field_path("tpcs"), "does not match tpc_mask");
    process.gpu_memory_bytes = read_fact<std::uint64_t>(r, "gpu_memory_bytes");
    process.from = read_from(r);
    return process;
}

Gpu read_gpu(Reader& r) {
    Gpu gpu;
    gpu.index = r.get<int>("index");
    gpu.name = read_fact<std::string>(r, "name");
    gpu.uuid = read_fact<std::string>(r, "uuid");
    gpu.pci_bus_id = read_fact<std::string>(r, "pci_bus_id");
    gpu.architecture = read_fact<std::string>(r, "architecture");
    gpu.compute_capability = read_fact<std::string>(r, "compute_capability");
    gpu.driver_version = read_fact<std::string>(r, "driver_version");
    gpu.cuda_version = read_fact<std::string>(r, "cuda_version");
    gpu.sm_count = read_fact<int>(r, "sm_count");
    gpu.descriptor_version = read_fact<int>(r, "descriptor_version");
    gpu.mig_enabled = read_fact<bool>(r, "mig_enabled");
    gpu.mask_width = r.get<int>("mask_width");
    gpu.gpcs = read_array<Gpc>(r, "gpcs", read_gpc);
    gpu.tpcs = read_array<Tpc>(r, "tpcs", read_tpc);
    gpu.holes = read_array<Hole>(r, "holes", read_hole);
    gpu.engines = read_array<Engine>(r, "engines", read_engine);
    gpu.runlists = read_array<Runlist>(r, "runlists", read_runlist);
    {
        Reader copy(r.child("copy_engines"), r.field_path("copy_engines"));
        gpu.copy_engines.lces = read_array<LogicalCopyEngine>(copy, "lces", read_lce);
        gpu.copy_engines.pce_count = read_fact<int>(copy, "pce_count");
        copy.finish();
    }
    {
        Reader fifo(r.child("fifo"), r.field_path("fifo"));
        gpu.fifo.max_channel_groups = read_fact<int>(fifo, "max_channel_groups");
        gpu.fifo.max_channels_per_group = read_fact<int>(fifo, "max_channels_per_group");
        gpu.fifo.channel_groups_in_use = read_fact<int>(fifo, "channel_groups_in_use");
        fifo.finish();
    }
    gpu.processes = read_array<Process>(r, "processes", read_process);
    gpu.notes = read_scalars<std::string>(r, "notes");
    if (auto problem = find_inconsistency(gpu)) Reader::fail(r.path(), *problem);
    return gpu;
}

}  // namespace

Snapshot snapshot_from_json(const OrderedJson& document) {
    Reader top(document, "");
    const auto format = top.get<std::string>("format");
    if (format != kSnapshotFormatName)
        Reader::fail("format", fmt::format("is '{}', expected '{}'", format, kSnapshotFormatName));
    const auto version = top.get<int>("version");
    if (version != Snapshot::kFormatVersion && version != Snapshot::kBitsFormatVersion)
        Reader::fail("version", fmt::format("{} is not supported (this gpupart reads version {}{})", version,
                                            Snapshot::kFormatVersion,
                                            version > Snapshot::kFormatVersion ? "; upgrade gpupart" : ""));
    Snapshot snapshot;
    snapshot.captured = top.get<std::string>("captured");
    snapshot.description = top.get<std::string>("description");
    snapshot.gpus = read_array<Gpu>(top, "gpus", read_gpu);
    for (std::size_t i = 0; i < snapshot.gpus.size(); ++i)
        if (snapshot.gpus[i].index != static_cast<int>(i))
            Reader::fail(fmt::format("gpus[{}].index", i), "must equal its position in gpus");
    // Version 1 recorded processes' masks as launch-descriptor bits: read them as TPC numbers through the
    // recorded GPU's own map, or refuse where the recording does not have it.
    if (version == Snapshot::kBitsFormatVersion)
        for (Gpu& gpu : snapshot.gpus) {
            std::string why;
            const std::optional<TpcNumbering> numbering = TpcNumbering::try_of(gpu, &why);
            for (std::size_t p = 0; p < gpu.processes.size(); ++p) {
                std::optional<TpcMask>& mask = gpu.processes[p].tpc_mask;
                if (!mask) continue;
                if (!numbering)
                    Reader::fail(fmt::format("gpus[{}].processes[{}].tpc_mask", gpu.index, p),
                                 fmt::format("a version 1 recording's mask is launch-descriptor bits, and this GPU's map of them to TPC "
                                             "numbers is not recorded ({})", why));
                mask = numbering->to_numbers(*mask);
            }
        }
    top.finish();
    return snapshot;
}

}  // namespace gpupart
