#include "report/sources_report.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"
#include "report/fact_text.hpp"
#include "sources/source_status_text.hpp"

namespace gpupart {
namespace {

template <typename T>
FactOrigin of_fact(std::string name, const Fact<T>& fact) {
    FactOrigin row{std::move(name), {}, {{fact.from, 1}}, {}};
    if (fact.known()) row.value = fmt::format("{}", *fact.value);
    else row.unknown_reason = fact.unknown_reason.empty() ? "unknown" : fact.unknown_reason;
    return row;
}

// A list of items: its count, and each distinct provenance with how many items carry it.
template <typename T, typename GetFrom>
FactOrigin of_items(std::string name, const std::vector<T>& items, std::string value, GetFrom get_from, std::string if_empty) {
    FactOrigin row{std::move(name), std::move(value), {}, {}};
    if (items.empty()) {
        row.value.clear();
        row.unknown_reason = std::move(if_empty);
        return row;
    }
    std::map<std::pair<Source, std::string>, int> counts;
    std::vector<std::pair<Source, std::string>> order;
    for (const T& item : items) {
        const Provenance& from = get_from(item);
        if (counts[{from.source, from.detail}]++ == 0) order.push_back({from.source, from.detail});
    }
    for (const auto& key : order) row.from.push_back({Provenance{key.first, key.second}, counts[key]});
    return row;
}

}  // namespace

std::vector<FactOrigin> fact_origins(const Gpu& gpu) {
    std::vector<FactOrigin> rows;
    rows.push_back(of_fact("name", gpu.name));
    rows.push_back(of_fact("uuid", gpu.uuid));
    rows.push_back(of_fact("PCI bus id", gpu.pci_bus_id));
    rows.push_back(of_fact("architecture", gpu.architecture));
    rows.push_back(of_fact("compute capability", gpu.compute_capability));
    rows.push_back(of_fact("driver", gpu.driver_version));
    rows.push_back(of_fact("CUDA", gpu.cuda_version));
    rows.push_back(of_fact("SMs", gpu.sm_count));
    rows.push_back(of_fact("launch descriptor", gpu.descriptor_version));
    rows.push_back(of_fact("MIG enabled", gpu.mig_enabled));
    rows.push_back(of_items("GPCs", gpu.gpcs, fmt::format("{}", gpu.gpcs.size()), [](const Gpc& g) -> const Provenance& { return g.from; },
                            "no source gave a GPC layout"));
    rows.push_back(of_items("TPCs", gpu.tpcs, fmt::format("{}, {} SMs", gpu.tpcs.size(), sm_total(gpu)),
                            [](const Tpc& t) -> const Provenance& { return t.from; }, "no source gave a TPC layout"));
    FactOrigin bits{"TPC mask bits", {}, {}, {}};
    if (mask_bits_known(gpu)) {
        bits = of_items("TPC mask bits", gpu.tpcs, fmt::format("{} bits, {} holes", gpu.tpcs.size(), gpu.holes.size()),
                        [](const Tpc& t) -> const Provenance& { return t.from; }, "");
    } else {
        bits.unknown_reason = mask_bits_unknown_reason(gpu);
    }
    rows.push_back(std::move(bits));
    rows.push_back(of_items("engines", gpu.engines, fmt::format("{}", gpu.engines.size()),
                            [](const Engine& e) -> const Provenance& { return e.from; }, "no source gave the engines"));
    std::vector<Fact<int>> runlist_facts;
    for (const Engine& engine : gpu.engines) runlist_facts.push_back(engine.runlist);
    FactOrigin runlists = of_items("engine runlists", runlist_facts, fmt::format("{} runlists", gpu.runlists.size()),
                                   [](const Fact<int>& f) -> const Provenance& { return f.from; }, "no engines");
    if (!gpu.engines.empty() && gpu.runlists.empty()) {
        runlists.value.clear();
        runlists.unknown_reason = gpu.engines.front().runlist.unknown_reason.empty() ? "unknown" : gpu.engines.front().runlist.unknown_reason;
    }
    rows.push_back(std::move(runlists));
    rows.push_back(of_fact("TSGs in use", gpu.fifo.channel_groups_in_use));
    rows.push_back(of_fact("max TSGs", gpu.fifo.max_channel_groups));
    rows.push_back(of_items("copy engines (LCE -> PCE)", gpu.copy_engines.lces,
                            fmt::format("{} LCEs, {} PCEs", gpu.copy_engines.lces.size(), fact_text(gpu.copy_engines.pce_count)),
                            [](const LogicalCopyEngine& l) -> const Provenance& { return l.from; }, fact_text(gpu.copy_engines.pce_count)));
    FactOrigin processes = of_items("processes", gpu.processes, fmt::format("{}", gpu.processes.size()),
                                    [](const Process& p) -> const Provenance& { return p.from; }, "");
    if (gpu.processes.empty()) processes.value = "none listed";  // a list, not a fact: empty is an answer
    rows.push_back(std::move(processes));
    return rows;
}

std::vector<TpcBitRow> tpc_bit_rows(const Gpu& gpu) {
    std::vector<TpcBitRow> rows;
    for (const Tpc& tpc : gpu.tpcs) rows.push_back({tpc_number(tpc), tpc.mask_bit, tpc.sms, tpc.gpc});
    std::stable_sort(rows.begin(), rows.end(), [](const TpcBitRow& a, const TpcBitRow& b) {
        if (a.tpc.has_value() != b.tpc.has_value()) return a.tpc.has_value();
        return a.tpc < b.tpc;
    });
    return rows;
}

std::string sources_text(const Gpu& gpu, const std::vector<SourceStatus>& sources, bool live) {
    std::string out = fmt::format("GPU {} sources\n", gpu.index);
    if (!live) out += "  none read live: this is a recording (its facts say where they were measured)\n";
    for (const SourceStatus& status : sources) out += "  " + source_status_line(status) + "\n";
    out += "\nFacts and where they came from\n";
    for (const FactOrigin& row : fact_origins(gpu)) {
        out += fmt::format("  {:<26} {}\n", row.fact, row.value.empty() ? "unknown: " + row.unknown_reason : row.value);
        for (const auto& [from, count] : row.from)
            out += fmt::format("  {:<26}   from {}{}\n", "", provenance_text(from),
                               row.from.size() > 1 || count > 1 ? fmt::format(" ({})", count) : std::string());
    }
    const std::vector<TpcBitRow> tpcs = tpc_bit_rows(gpu);
    if (!tpcs.empty()) {
        out += "\nTPC numbers and launch-descriptor bits (a mask names TPC numbers; `bits:0x...` names descriptor bits)\n";
        out += fmt::format("  {:>4} {:>4}  {:<8} {}\n", "TPC", "bit", "SMs", "GPC");
        const auto text = [](std::optional<int> value) { return value ? fmt::format("{}", *value) : std::string("?"); };
        for (const TpcBitRow& row : tpcs)
            out += fmt::format("  {:>4} {:>4}  {:<8} {}\n", text(row.tpc), text(row.descriptor_bit),
                               row.sms.empty() ? std::string("?") : fmt::format("{}", fmt::join(row.sms, ",")),
                               row.gpc ? gpc_name(*row.gpc) : std::string("?"));
    }
    return out;
}

}  // namespace gpupart
