#include "top/top_view.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "model/ascii_text.hpp"
#include "model/gpu_queries.hpp"
#include "model/tpc_numbering.hpp"

namespace gpupart::top {
namespace {

// -1 sorts a process with no rate yet below every measured one.
double rate_or_minus(const TopProcess& p) { return p.launches_per_second.value_or(-1.0); }

// REQUESTED in floorplan order: by the lowest TPCs first; an unpartitioned process ("all") after every mask.
std::pair<bool, std::vector<int>> mask_order(const TopProcess& p) { return {!p.partitioned, p.partitioned ? p.mask.bits() : std::vector<int>{}}; }

std::string target_text(const TopData& data, const UiState& ui) {
    const auto pids = target_pids(data, ui);
    if (pids.empty()) return "the selected process";
    if (pids.size() == 1) {
        const TopProcess* p = find_process(data, pids.front());
        return fmt::format("{} ({})", pids.front(), p ? std::string(1, p->letter) : "?");
    }
    return fmt::format("{} tagged processes", pids.size());
}

}  // namespace

std::string_view sort_key_name(SortKey key) {
    switch (key) {
        case SortKey::pid: return "PID";
        case SortKey::user: return "USER";
        case SortKey::tpcs: return "TPCS";
        case SortKey::sms: return "SMS";
        case SortKey::share: return "SHARE";
        case SortKey::rate: return "LAUNCH/s";
        case SortKey::launches: return "LAUNCHES";
        case SortKey::memory: return "MEM";
        case SortKey::gpu: return "GPU%";
        case SortKey::cpu: return "CPU%";
        case SortKey::rss: return "RSS";
        case SortKey::scaling: return "SCALING";
        case SortKey::app: return "APP";
        case SortKey::shim: return "SHIM";
        case SortKey::requested: return "REQUESTED";
        case SortKey::applied: return "APPLIED";
        case SortKey::command: return "COMMAND";
    }
    return "?";
}

std::optional<SortKey> sort_key_named(std::string_view name) {
    for (SortKey key : kSortKeys)
        if (ascii_lower(sort_key_name(key)) == ascii_lower(name)) return key;
    return std::nullopt;
}

std::vector<SortKey> sort_choices(const UiState& ui, const std::vector<SortKey>& shown) {
    std::vector<SortKey> keys = shown.empty() ? std::vector<SortKey>(std::begin(kSortKeys), std::end(kSortKeys)) : shown;
    if (std::find(keys.begin(), keys.end(), ui.sort) == keys.end()) keys.push_back(ui.sort);
    return keys;
}

bool process_matches(const TopProcess& process, const std::string& text) {
    if (text.empty()) return true;
    const std::string needle = ascii_lower(text);
    return std::to_string(process.pid).find(needle) != std::string::npos || ascii_lower(process.user).find(needle) != std::string::npos ||
           ascii_lower(process.command).find(needle) != std::string::npos;
}

int selection_after(const std::vector<int>& before, int selected, const std::vector<int>& now) {
    const auto shown = [&](int pid) { return pid != 0 && std::find(now.begin(), now.end(), pid) != now.end(); };
    if (shown(selected)) return selected;
    const auto at = std::find(before.begin(), before.end(), selected);
    if (selected == 0 || at == before.end()) return 0;
    const auto index = static_cast<std::size_t>(at - before.begin());
    for (std::size_t step = 1; step < before.size(); ++step) {
        if (index + step < before.size() && shown(before[index + step])) return before[index + step];
        if (index >= step && shown(before[index - step])) return before[index - step];
    }
    return 0;
}

std::vector<const TopProcess*> visible_processes(const TopData& data, const UiState& ui) {
    std::vector<const TopProcess*> shown;
    for (const TopProcess& process : data.processes)
        if (process_matches(process, ui.filter)) shown.push_back(&process);
    const auto less = [&](const TopProcess* a, const TopProcess* b) {
        switch (ui.sort) {
            case SortKey::pid: return a->pid < b->pid;
            case SortKey::user: return a->user < b->user;
            case SortKey::tpcs: return tpc_count(data, *a) < tpc_count(data, *b);
            case SortKey::sms: return sm_count(data, *a) < sm_count(data, *b);
            case SortKey::share: return tpc_count(data, *a) < tpc_count(data, *b);  // the same order, its own arrow
            case SortKey::rate: return rate_or_minus(*a) < rate_or_minus(*b);
            case SortKey::launches: return a->launches < b->launches;
            // An empty optional (no source tells) sorts below every figure: last when highest first.
            case SortKey::memory: return a->memory_bytes < b->memory_bytes;
            case SortKey::gpu: return a->gpu_percent < b->gpu_percent;
            case SortKey::cpu: return a->cpu_percent < b->cpu_percent;
            case SortKey::rss: return a->rss_bytes < b->rss_bytes;
            case SortKey::scaling: return a->scaling < b->scaling;
            case SortKey::app: return a->app_masks < b->app_masks;
            case SortKey::shim: return a->shim < b->shim;
            case SortKey::requested: return mask_order(*a) < mask_order(*b);
            case SortKey::applied: return a->applied < b->applied;
            case SortKey::command: return a->command < b->command;
        }
        return false;
    };
    std::stable_sort(shown.begin(), shown.end(), [&](const TopProcess* a, const TopProcess* b) {
        if (less(a, b)) return !ui.sort_descending;
        if (less(b, a)) return ui.sort_descending;
        return a->pid < b->pid;
    });
    return shown;
}

const TopProcess* find_process(const TopData& data, int pid) {
    for (const TopProcess& process : data.processes)
        if (process.pid == pid) return &process;
    return nullptr;
}

const TopProcess* selected_process(const TopData& data, const UiState& ui) {
    const auto shown = visible_processes(data, ui);
    for (const TopProcess* process : shown)
        if (process->pid == ui.selected_pid) return process;
    return shown.empty() ? nullptr : shown.front();
}

std::vector<FloorRow> floor_rows(const Gpu& gpu) {
    std::vector<FloorRow> rows;
    for (const Gpc& gpc : gpu.gpcs) {
        FloorRow row{gpc_name(gpc.index), gpc.index, std::vector<int>(static_cast<std::size_t>(std::max(gpc.tpc_slots, 0)), -1)};
        std::vector<const Tpc*> unslotted;
        for (const Tpc& tpc : gpu.tpcs) {
            if (tpc.gpc != gpc.index) continue;
            ++row.tpcs;
            row.sms += static_cast<int>(tpc.sms.size());
            if (tpc.slot && *tpc.slot >= 0 && *tpc.slot < static_cast<int>(row.slots.size()) && row.slots[static_cast<std::size_t>(*tpc.slot)] < 0)
                row.slots[static_cast<std::size_t>(*tpc.slot)] = tpc_number(tpc).value_or(-1);  // no known number: drawn empty
            else
                unslotted.push_back(&tpc);
        }
        // TPCs with no recorded slot take the first slots no TPC or hole claims, then new ones.
        std::vector<bool> hole(row.slots.size(), false);
        for (const Hole& h : gpu.holes)
            if (h.gpc == gpc.index && h.slot && *h.slot >= 0 && *h.slot < static_cast<int>(hole.size())) hole[static_cast<std::size_t>(*h.slot)] = true;
        std::size_t next = 0;
        for (const Tpc* tpc : unslotted) {
            while (next < row.slots.size() && (row.slots[next] >= 0 || hole[next])) ++next;
            if (next < row.slots.size())
                row.slots[next] = tpc_number(*tpc).value_or(-1);
            else
                row.slots.push_back(tpc_number(*tpc).value_or(-1));
        }
        rows.push_back(std::move(row));
    }
    FloorRow unknown{"no GPC", -1, {}};
    for (const Tpc& tpc : gpu.tpcs)
        if (!tpc.gpc) {
            unknown.slots.push_back(tpc_number(tpc).value_or(-1));
            ++unknown.tpcs;
            unknown.sms += static_cast<int>(tpc.sms.size());
        }
    if (!unknown.slots.empty()) rows.push_back(std::move(unknown));
    return rows;
}

Ownership ownership(const TopData& data) {
    Ownership owners;
    for (std::size_t i = 0; i < data.processes.size(); ++i) {
        const TopProcess& process = data.processes[i];
        if (!process.partitioned) continue;
        for (int bit : process.mask.bits()) owners[static_cast<std::size_t>(bit)].push_back(static_cast<int>(i));
    }
    return owners;
}

TpcMask free_tpcs(const TopData& data) {
    TpcMask held;
    for (const TopProcess& process : data.processes)
        if (process.partitioned) held |= process.mask;
    return real_tpcs(data.gpu) & ~held;
}

int cursor_bit(const TopData& data, const UiState& ui) {
    if (ui.cursor_bit >= 0 && real_tpcs(data.gpu).test(ui.cursor_bit)) return ui.cursor_bit;
    for (const FloorRow& row : floor_rows(data.gpu))
        for (int bit : row.slots)
            if (bit >= 0) return bit;
    return -1;
}

TpcMask give_selection(const TopData& data, const UiState& ui) {
    const TpcMask marked = ui.marked & real_tpcs(data.gpu);
    if (!marked.empty()) return marked;
    TpcMask one;
    if (const int bit = cursor_bit(data, ui); bit >= 0) one.set(bit);
    return one;
}

std::vector<int> target_pids(const TopData& data, const UiState& ui) {
    std::vector<int> pids;
    for (const TopProcess* process : visible_processes(data, ui))
        if (ui.tagged.count(process->pid)) pids.push_back(process->pid);
    if (pids.empty())
        if (const TopProcess* selected = selected_process(data, ui)) pids.push_back(selected->pid);
    return pids;
}

std::vector<ProcessRef> target_processes(const TopData& data, const UiState& ui) {
    std::vector<ProcessRef> chosen;
    for (int pid : target_pids(data, ui))
        if (const TopProcess* process = find_process(data, pid)) chosen.push_back({process->pid, process->start_time});
    return chosen;
}

namespace {

// Whether giving `tpcs` to `to` would change anything: not when it holds them all already (
// such changes are refused, so they are not offered).
bool gives_anything(const TopProcess* to, const TpcMask& tpcs) {
    return to != nullptr && !tpcs.empty() && !(to->partitioned && (tpcs & ~to->mask).empty());
}

// Whether releasing `tpcs` would change anything: only when a partitioned process holds one of them.
bool releases_anything(const TopData& data, const TpcMask& tpcs) {
    return std::any_of(data.processes.begin(), data.processes.end(),
                       [&](const TopProcess& p) { return p.partitioned && !(p.mask & tpcs).empty(); });
}

}  // namespace

std::vector<MenuItem> action_menu(const TopData& data, const UiState& ui) {
    const TopProcess* selected = selected_process(data, ui);
    const std::string to = selected ? fmt::format("{} ({})", selected->pid, selected->letter) : "the selected process";
    const TpcMask marked = ui.marked & real_tpcs(data.gpu);
    std::vector<MenuItem> items;
    items.push_back({MenuAction::give_marked,
                     marked.empty() ? "Give marked TPCs to the selected process (mark them first)"
                                    : fmt::format("Give marked TPCs {} to {}", marked.to_list(), to),
                     gives_anything(selected, marked)});
    const int bit = cursor_bit(data, ui);
    const Tpc* tpc = bit >= 0 ? find_tpc(data.gpu, bit) : nullptr;
    items.push_back({MenuAction::give_gpc,
                     tpc && tpc->gpc ? fmt::format("Give {} (the cursor's GPC) to {}", gpc_name(*tpc->gpc), to)
                                     : "Give the cursor's GPC to the selected process",
                     tpc && tpc->gpc && gives_anything(selected, gpc_tpcs(data.gpu, *tpc->gpc))});
    const TpcMask selection = give_selection(data, ui);
    items.push_back({MenuAction::release, fmt::format("Release {} (held by nobody then)   Del", selection.empty() ? "TPCs" : selection.to_list()),
                     releases_anything(data, selection)});
    const bool any_target = !target_pids(data, ui).empty();
    items.push_back({MenuAction::grow, fmt::format("Add a free TPC to {}   +", target_text(data, ui)), any_target});
    items.push_back({MenuAction::shrink, fmt::format("Take a TPC from {}   -", target_text(data, ui)), any_target});
    items.push_back({MenuAction::undo, "Undo your last change   u", true});
    items.push_back({MenuAction::clear_marks, "Clear the marks   Esc", !marked.empty()});
    items.push_back({MenuAction::untag, "Untag all processes", !ui.tagged.empty()});
    return items;
}

std::string tpcs_text(const TopProcess& process) {
    if (!process.partitioned) return "all";
    return process.mask.empty() ? "(none)" : process.mask.to_list();
}

int tpc_count(const TopData& data, const TopProcess& process) {
    const TpcMask real = real_tpcs(data.gpu);
    return (process.partitioned ? process.mask & real : real).count();
}

int sm_count(const TopData& data, const TopProcess& process) {
    return static_cast<int>(sms_of(data.gpu, process.partitioned ? process.mask : real_tpcs(data.gpu)).size());
}

}  // namespace gpupart::top
