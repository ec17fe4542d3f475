#include "report/engines_text.hpp"

#include <map>

#include <fmt/format.h>

#include "report/fact_text.hpp"
#include "report/topology_text.hpp"

namespace gpupart {
namespace {

bool is_grce(const Gpu& gpu, const Engine& engine) {
    if (engine.kind != EngineKind::copy) return false;
    for (const auto& lce : gpu.copy_engines.lces)
        if (lce.index == engine.instance && lce.grce) return true;
    return false;
}

std::string engine_label(const Gpu& gpu, const Engine& engine) {
    std::string name = engine.name;
    if (is_grce(gpu, engine)) name += " (GRCE)";
    if (engine.tsgs_in_use.known()) name += fmt::format(" [{} TSGs]", *engine.tsgs_in_use.value);
    return name;
}

// "runlist 0: channels 1-3" when a source gave the allocated channel ids.
std::string channels_text(const Runlist& runlist) {
    if (runlist.channel_ids.empty()) return {};
    std::string ids;
    for (std::size_t i = 0; i < runlist.channel_ids.size();) {
        std::size_t j = i;
        while (j + 1 < runlist.channel_ids.size() && runlist.channel_ids[j + 1] == runlist.channel_ids[j] + 1) ++j;
        if (!ids.empty()) ids += ",";
        ids += j == i ? fmt::format("{}", runlist.channel_ids[i])
                      : fmt::format("{}-{}", runlist.channel_ids[i], runlist.channel_ids[j]);
        i = j + 1;
    }
    return fmt::format("; channels {}", ids);
}

void append_fifo(std::string& out, const Gpu& gpu) {
    const FifoCounts& fifo = gpu.fifo;
    if (!fifo.max_channel_groups.known() && !fifo.channel_groups_in_use.known()) return;
    out += fmt::format("  channel groups (TSGs): {} in use of {}, up to {} channels each\n", fact_text(fifo.channel_groups_in_use),
                       fact_text(fifo.max_channel_groups), fact_text(fifo.max_channels_per_group));
}

}  // namespace

std::string engines_text(const Gpu& gpu) {
    if (gpu.engines.empty()) return "Engines: not known for this GPU\n";
    std::string out = "Engines by runlist (Bakita & Anderson, RTAS 2024, rule R6: a runlist may serve several engines; R7: an engine has one runlist)\n";
    std::map<int, std::vector<std::string>> by_runlist;
    std::map<std::string, std::vector<std::string>> unknown;  // reason -> engines
    for (const Engine& engine : gpu.engines) {
        if (engine.runlist.known())
            by_runlist[*engine.runlist.value].push_back(engine_label(gpu, engine));
        else
            unknown[engine.runlist.unknown_reason].push_back(engine_label(gpu, engine));
    }
    std::map<int, const Runlist*> runlists;
    for (const Runlist& runlist : gpu.runlists) {
        runlists[runlist.id] = &runlist;
        by_runlist[runlist.id];
    }
    for (const auto& [id, names] : by_runlist) {
        const auto it = runlists.find(id);
        out += fmt::format("  runlist {:<4} {}{}\n", id, names.empty() ? "(no engine named)" : fmt::format("{}", fmt::join(names, ", ")),
                           it == runlists.end() ? std::string() : channels_text(*it->second));
    }
    for (const auto& [reason, names] : unknown)
        out += fmt::format("  runlist ?    {}: {}\n", fmt::join(names, ", "), reason.empty() ? "unknown" : reason);
    append_fifo(out, gpu);
    out += fmt::format("  source: {}\n", provenance_text(gpu.engines.front().from));
    if (!gpu.engines.front().runlist.known() && !gpu.engines.front().runlist.from.detail.empty())
        out += fmt::format("  runlists: {}\n", provenance_text(gpu.engines.front().runlist.from));
    return out;
}

std::string copy_engines_text(const Gpu& gpu) {
    if (gpu.copy_engines.lces.empty())
        return fmt::format("Copy engines (LCE -> PCE): {}\n", fact_text(gpu.copy_engines.pce_count));
    std::string out = fmt::format("Copy engines: LCE -> PCE wiring ({} PCEs)\n", fact_text(gpu.copy_engines.pce_count));
    for (const auto& lce : gpu.copy_engines.lces) {
        std::string caps = lce.grce ? "GRCE" : "";
        if (lce.shared) caps += caps.empty() ? "shared" : " shared";
        out += fmt::format("  LCE{:<3} {:<12} PCEs {}\n", lce.index, caps, pce_list(lce.pce_mask));
    }
    for (const auto& line : shared_copy_engine_lines(gpu)) out += "  ! " + line + "\n";
    out += fmt::format("  source: {}\n", provenance_text(gpu.copy_engines.lces.front().from));
    return out;
}

}  // namespace gpupart
