// The SMLP components view (x): every component of the registry with its TPCs, who holds which of them
// (a strip of the component's TPCs, each marked by its holder: the owner letter where the holder is a
// process of the table, else a digit) and its queues, SQ (holders), FQ and PQ in their order, refreshed
// with every sample. Esc closes it (top_input_dialogs); `gpupart smlp` prints the same.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "platform/user_names.hpp"
#include "top/top_layout_parts.hpp"

namespace gpupart::top {
namespace {

struct Part {
    std::string text;
    Style style;
};
using ViewLine = std::vector<Part>;

// How each holder of a component is marked: its owner letter and colour when it is a process of the
// table, else 1-9 then '#'; a holder that died (its TPCs return at the next change) in red.
struct HolderMark {
    std::string glyph;
    Style style;
};

std::map<int, HolderMark> holder_marks(const TopData& data, const SmlpComponent& c) {
    std::map<int, HolderMark> marks;
    int other = 0;
    for (const SmlpRequest& r : c.sq) {
        const TopProcess* p = find_process(data, r.pid);
        HolderMark mark = p != nullptr ? HolderMark{std::string(1, p->letter), {owner_role(p->colour), true}}
                                       : HolderMark{other < 9 ? std::to_string(++other) : "#", {Role::value, true}};
        if (r.liveness != Liveness::alive) mark.style = {Role::bad, true};
        marks[r.record] = mark;
    }
    return marks;
}

std::string queue_time(const SmlpRequest& r, std::uint64_t now) {
    const bool held = r.queue == GPUPART_SMLP_SQ;
    return fmt::format("{} {}", held ? "held" : "waits", smlp_duration_text(held ? r.satisfied_ns : r.issued_ns, now));
}

void add_component(std::vector<ViewLine>& lines, const TopData& data, const SmlpComponent& c) {
    const std::string here = gpu_key(data.gpu);
    const std::string gpu = c.gpu.empty() ? "GPU not said" : c.gpu == here ? "this GPU" : c.gpu.substr(0, 12) + " (another GPU)";
    lines.push_back({{c.name, {Role::value, true}},
                     {fmt::format(" ({}) · {} · TPCs {} · H {} h {} M {}", one_line(user_name(c.owner)), gpu, c.tpcs.to_list(), c.size,
                                  c.granularity, c.fq_length),
                      {Role::normal}}});
    lines.push_back({{fmt::format("  satisfied {} · finalized {} · reclaimed {} · inheritance applied {}, refused {}", c.satisfied,
                                  c.finalized, c.reclaimed, c.inheritance_applied, c.inheritance_refused),
                      {Role::dim}}});
    if (c.changing) {
        lines.push_back({{"  being changed at every read (a process is inside its lock, or died there: the next lock repairs it)",
                          {Role::label}}});
        return;
    }
    // The strip: one mark per TPC of the component, in bit order, a space every 8.
    const auto marks = holder_marks(data, c);
    ViewLine strip{{"  held  ", {Role::label}}};
    int n = 0;
    for (int bit : c.tpcs.bits()) {
        if (n++ % 8 == 0 && n > 1) strip.push_back({" ", {Role::normal}});
        const SmlpRequest* holder = c.holder_of(bit);
        strip.push_back(holder ? Part{marks.at(holder->record).glyph, marks.at(holder->record).style} : Part{".", {Role::free_tpc}});
    }
    strip.push_back({fmt::format("   free {}", c.free.empty() ? "none" : c.free.to_list()), {Role::dim}});
    lines.push_back(std::move(strip));
    if (c.sq.empty() && c.fq.empty() && c.pq.empty()) {
        lines.push_back({{"  no request: every TPC is free", {Role::good}}});
        return;
    }
    for (const auto* queue : {&c.sq, &c.fq, &c.pq})
        for (const SmlpRequest& r : *queue) {
            const bool held = r.queue == GPUPART_SMLP_SQ;
            // A waiter that is a process of the table shows its letter too, dim: it holds nothing yet.
            const TopProcess* waiter = held ? nullptr : find_process(data, r.pid);
            const HolderMark mark = held ? marks.at(r.record) : waiter ? HolderMark{std::string(1, waiter->letter), {Role::dim}} : HolderMark{" ", {}};
            const std::string note = r.liveness != Liveness::alive ? "exited: freed at the next change" : inheritance_text(r);
            lines.push_back({{fmt::format("  {} ", to_string(r.queue)), {Role::label}},
                             {mark.glyph, mark.style},
                             {fmt::format(" {:>7} prio {:>3} #{:<4} {:<14} {:<12} {:<20} ", r.pid, r.priority, r.ticket,
                                          held ? "TPCs " + r.granted.to_list() : "", queue_time(r, data.smlp_now_ns), r.label),
                              {Role::normal}},
                             {note, {r.liveness != Liveness::alive || r.inheritance == GPUPART_SMLP_INHERIT_REFUSED ? Role::bad : Role::dim}}});
        }
}

std::vector<ViewLine> smlp_view_lines(const TopData& data) {
    std::vector<ViewLine> lines;
    if (!data.smlp_problem.empty()) lines.push_back({{data.smlp_problem, {Role::bad, true}}});
    if (data.smlp.empty()) {
        lines.push_back({{"no SMLP component: programs make them with gpupart_smlp_open (docs/api.md)", {Role::dim}}});
        return lines;
    }
    for (const SmlpEntry& entry : data.smlp) {
        if (!lines.empty()) lines.push_back({});
        if (entry.component)
            add_component(lines, data, *entry.component);
        else
            lines.push_back({{"? " + entry.problem, {Role::bad}}});
    }
    return lines;
}

}  // namespace

int smlp_component_count(const TopData& data) {
    return static_cast<int>(std::count_if(data.smlp.begin(), data.smlp.end(), [](const SmlpEntry& e) { return e.component.has_value(); }));
}

std::string smlp_holders_at(const TopData& data, int bit) {
    const std::string here = gpu_key(data.gpu);
    std::string text;
    for (const SmlpEntry& entry : data.smlp) {
        if (!entry.component || (!entry.component->gpu.empty() && entry.component->gpu != here)) continue;
        const SmlpComponent& c = *entry.component;
        if (!c.tpcs.test(bit)) continue;
        const SmlpRequest* holder = c.holder_of(bit);
        text += fmt::format(" · SMLP {}: {}", c.name,
                            c.changing ? "being changed" : holder ? fmt::format("held by {} ({})", holder->pid, holder->label) : "free");
    }
    return text;
}

void draw_smlp_view(Screen& screen, const TopData& data, const UiState& ui) {
    const int width = screen.width();
    const int height = screen.height();
    const int inner = width - 4;
    const auto lines = smlp_view_lines(data);
    const int rows = std::max(1, height - 3);
    const int total = static_cast<int>(lines.size());
    const int first = std::clamp(ui.smlp_first_line, 0, std::max(0, total - rows));
    screen.findings_lines = total;  // the scroll state of the full-screen view shown (f or x)
    screen.findings_rows = rows;
    screen.findings_first_line = first;
    screen.hits.clear();
    draw_box(screen, 0, 0, height, width, fmt::format("SMLP components ({}) · live · gpupart smlp lists the same", smlp_component_count(data)));
    for (int i = 0; i < rows && first + i < total; ++i) {
        int c = 2;
        for (const Part& part : lines[static_cast<std::size_t>(first + i)]) {
            if (c >= 2 + inner) break;
            c = screen.put(1 + i, c, part.text, part.style, 2 + inner - c);
        }
    }
    const std::string where = total > rows ? fmt::format("lines {}-{} of {} · ", first + 1, std::min(total, first + rows), total) : "";
    screen.put(height - 2, 2, fit(where + "held: a letter per TPC (the table's process, or 1-9) · . free · ↑ ↓ PgUp PgDn scroll · Esc closes", inner),
               {Role::dim});
}

}  // namespace gpupart::top
