// The floorplan section: every GPC as a row of TPC slots, each TPC lettered and coloured by the process
// holding it ('.' free, '*' held by several), holes left blank, marks and the cursor shown on the cells.
#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "top/top_layout_parts.hpp"

namespace gpupart::top {
namespace {

constexpr int kLabelWidth = 7;     // "no GPC "
constexpr int kCountsWidth = 110;
constexpr int kSummaryWidth = 22;  // "A 4 · B 4 · 1 free"  // from this width, each GPC row says how many TPCs and SMs it has

struct TpcLook {
    std::string glyph;
    Style style;
    bool shared = false;  // held by several processes: '*' before the first holder's letter
};

TpcLook look_of(int bit, const TopData& data, const Ownership& owners, const UiState& ui, int cursor) {
    const auto& holders = owners[static_cast<std::size_t>(bit)];
    TpcLook look;
    if (holders.empty()) {
        look = {".", {Role::free_tpc}};
    } else if (holders.size() > 1) {
        // Shared: the first holder's letter stays (who holds it), on the overlap colour; the cell before it
        // says '*' (a text frame has no colour), the GPC's summary and the status line (Tab) name every holder.
        const TopProcess& first = data.processes[static_cast<std::size_t>(holders.front())];
        look = {std::string(1, first.letter), {Role::overlap}, true};
    } else {
        const TopProcess& owner = data.processes[static_cast<std::size_t>(holders.front())];
        look = {std::string(1, owner.letter), {owner_role(owner.colour), ui.tagged.count(owner.pid) > 0}};
    }
    if (ui.marked.test(bit)) look.style.underline = true;
    if (bit == cursor && ui.focus == Focus::floorplan) look.style.reverse = true;
    return look;
}

int compact_columns(const std::vector<FloorRow>& rows, int width) {
    std::size_t slots = 0;
    for (const FloorRow& row : rows) slots = std::max(slots, row.slots.size());
    const int row_width = kLabelWidth + 3 + 2 * static_cast<int>(slots);
    return rows.size() > 1 && 2 + 2 * row_width + 3 <= width ? 2 : 1;
}

int cell_width(FloorplanMode mode) { return mode == FloorplanMode::compact ? 2 : mode == FloorplanMode::wide ? 5 : 7; }

std::string sm_text(const Gpu& gpu, int bit) {
    const Tpc* tpc = find_tpc(gpu, bit);
    if (tpc == nullptr || tpc->sms.empty()) return "?";
    if (tpc->sms.size() == 2 && tpc->sms[1] == tpc->sms[0] + 1) return fmt::format("{}-{}", tpc->sms[0], tpc->sms[1]);
    return fmt::format("{}", fmt::join(tpc->sms, ","));
}

// "A 8 · B 1 · 2 shared · 0 free": who holds this GPC's TPCs, in `width` cells. Where that is too long
// (many holders, shared TPCs, 80 columns) it is shortened on purpose, never cut mid-word: "A8 B1 *2 .0"
// (the floorplan's own marks: * shared, . free), then the first holders and "+3" for the rest.
// `allow_full`: false where another GPC's row needs the short form, so that every row reads alike.
std::string row_summary(const FloorRow& row, const TopData& data, const Ownership& owners, int width, bool allow_full = true) {
    std::map<char, int> held;
    int free = 0, shared = 0;
    for (int bit : row.slots) {
        if (bit < 0) continue;
        const auto& holders = owners[static_cast<std::size_t>(bit)];
        if (holders.empty()) ++free;
        if (holders.size() > 1) ++shared;
        for (int index : holders) ++held[data.processes[static_cast<std::size_t>(index)].letter];
    }
    const auto join = [&](bool brief, std::size_t keep) {
        std::vector<std::string> parts;
        for (const auto& [letter, count] : held) {
            if (parts.size() == keep) {
                parts.push_back(fmt::format("+{}", held.size() - keep));
                break;
            }
            parts.push_back(fmt::format("{}{}{}", letter, brief ? "" : " ", count));
        }
        if (shared > 0) parts.push_back(brief ? fmt::format("*{}", shared) : fmt::format("{} shared", shared));
        if (free > 0 || held.empty()) parts.push_back(brief ? fmt::format(".{}", free) : fmt::format("{} free", free));
        return fmt::format("{}", fmt::join(parts, brief ? " " : " · "));
    };
    if (const std::string full = join(false, held.size()); allow_full && text_width(full) <= width) return full;
    for (std::size_t keep = held.size() + 1; keep-- > 0;)
        if (const std::string brief = join(true, keep); text_width(brief) <= width) return brief;
    return fit(join(true, 0), width);
}

void draw_row(Screen& screen, int row, int column, const FloorRow& floor_row, const TopData& data, const UiState& ui,
              const Ownership& owners, int cursor, FloorplanMode mode, std::size_t slot_count, int right_edge, bool brief) {
    const int cw = cell_width(mode);
    int c = column;
    if (mode == FloorplanMode::compact) {
        c = screen.put(row, c, fit(floor_row.label, kLabelWidth), {Role::label}, kLabelWidth);
        c = column + kLabelWidth;
    } else {
        screen.put(row, c, floor_row.label, {Role::label});
        c = column + kLabelWidth;
        if (screen.width() >= kCountsWidth) {
            screen.put(row, c, fmt::format("{:>2} TPC {:>3} SM ", floor_row.tpcs, floor_row.sms), {Role::dim});
            c += 14;
        }
    }
    c = screen.put(row, c, "│", {Role::dim});
    const int cells_start = c;
    for (std::size_t s = 0; s < slot_count; ++s) {
        const int at = cells_start + static_cast<int>(s) * (cw + (mode == FloorplanMode::compact ? 0 : 1));
        const int bit = s < floor_row.slots.size() ? floor_row.slots[s] : -1;
        if (bit < 0) continue;  // a hole (or no slot): visibly empty
        const TpcLook look = look_of(bit, data, owners, ui, cursor);
        const std::string mark = ui.marked.test(bit) ? "+" : look.shared ? "*" : (mode == FloorplanMode::compact ? " " : "");
        const std::string text = mode == FloorplanMode::compact ? mark + look.glyph : fmt::format("{:>{}}", mark + look.glyph + " " + std::to_string(bit), cw);
        screen.put(row, at, text, look.style);
        screen.hits.push_back({row, at, cw, HitKind::tpc, bit});
        if (mode == FloorplanMode::tall) {
            Style below = look.style;
            below.underline = false;
            if (below.role == Role::free_tpc) below.role = Role::dim;
            screen.put(row + 1, at, fmt::format("{:>{}}", sm_text(data.gpu, bit), cw), below);
            screen.hits.push_back({row + 1, at, cw, HitKind::tpc, bit});
        }
    }
    const int cells_end = cells_start + static_cast<int>(slot_count) * (cw + (mode == FloorplanMode::compact ? 0 : 1)) +
                          (mode == FloorplanMode::compact ? 1 : 0);
    screen.put(row, cells_end, "│", {Role::dim});
    if (mode == FloorplanMode::tall) {
        screen.put(row + 1, cells_start - 1, "│", {Role::dim});
        screen.put(row + 1, cells_end, "│", {Role::dim});
    }
    if (mode != FloorplanMode::compact) {
        const int room = right_edge - (cells_end + 2);  // up to the side panel, where there is one
        screen.put(row, cells_end + 2, row_summary(floor_row, data, owners, room, !brief), {Role::dim}, room);
    }
}

}  // namespace

int floorplan_width(const TopData& data, FloorplanMode mode, int width) {
    std::size_t slots = 0;
    for (const FloorRow& row : floor_rows(data.gpu)) slots = std::max(slots, row.slots.size());
    const int cells = static_cast<int>(slots) * (cell_width(mode) + (mode == FloorplanMode::compact ? 0 : 1));
    if (mode == FloorplanMode::compact) return 2 + 2 * (kLabelWidth + 3 + cells) + 3;
    return kLabelWidth + (width >= kCountsWidth ? 14 : 0) + 1 + cells + 1 + 2 + kSummaryWidth;
}

int floorplan_height(const TopData& data, FloorplanMode mode, int width) {
    const auto rows = floor_rows(data.gpu);
    if (rows.empty()) return 2;
    if (mode == FloorplanMode::compact) {
        const auto columns = static_cast<std::size_t>(compact_columns(rows, width));
        return 1 + static_cast<int>((rows.size() + columns - 1) / columns);
    }
    return 1 + static_cast<int>(rows.size()) * (mode == FloorplanMode::tall ? 2 : 1);
}

int draw_floorplan(Screen& screen, int row, const TopData& data, const UiState& ui, FloorplanMode mode, int width) {
    const bool focused = ui.focus == Focus::floorplan;
    int c = screen.put(row, 0, focused ? "▸ Floorplan" : "  Floorplan", {Role::title, focused});
    // The legend's parts in order of need, each whole or not at all (80 columns show the first three).
    const std::vector<std::string> legend =
        mode == FloorplanMode::compact
            ? std::vector<std::string>{"letter = process", "*A shared (A: 1st holder)", ". free", "blank = hole", "+ marked"}
            : std::vector<std::string>{"TPC: owner letter, TPC number" + std::string(mode == FloorplanMode::tall ? " over its SM ids" : ""),
                                       "*A shared (A: 1st holder)", ". free", "blank = hole (no TPC)", "+ marked"};
    for (std::size_t i = 0; i < legend.size(); ++i) {
        const std::string part = (i == 0 ? "  " : " · ") + legend[i];
        if (c + text_width(part) > width) break;
        c = screen.put(row, c, part, {Role::dim});
    }
    const auto rows = floor_rows(data.gpu);
    if (rows.empty()) {
        screen.put(row + 1, 2, "TPC layout: not known for this GPU (no source gave one)", {Role::bad});
        return 2;
    }
    const Ownership owners = ownership(data);
    const int cursor = cursor_bit(data, ui);
    std::size_t slot_count = 0;
    for (const FloorRow& r : rows) slot_count = std::max(slot_count, r.slots.size());
    if (mode != FloorplanMode::compact) {
        // The summaries' room right of the cells (as draw_row places them): where one GPC's long form does
        // not fit, every row takes the short one.
        const int cells_end = kLabelWidth + (screen.width() >= kCountsWidth ? 14 : 0) + 1 + static_cast<int>(slot_count) * (cell_width(mode) + 1);
        const int room = width - (cells_end + 2);
        const bool brief = std::any_of(rows.begin(), rows.end(), [&](const FloorRow& r) {
            return text_width(row_summary(r, data, owners, std::numeric_limits<int>::max())) > room;
        });
        const int step = mode == FloorplanMode::tall ? 2 : 1;
        for (std::size_t i = 0; i < rows.size(); ++i)
            draw_row(screen, row + 1 + static_cast<int>(i) * step, 0, rows[i], data, ui, owners, cursor, mode, slot_count, width, brief);
        return 1 + static_cast<int>(rows.size()) * step;
    }
    const int columns = compact_columns(rows, screen.width());
    const int per_column = static_cast<int>((rows.size() + static_cast<std::size_t>(columns) - 1) / static_cast<std::size_t>(columns));
    const int column_width = kLabelWidth + 3 + 2 * static_cast<int>(slot_count) + 3;  // a row and a gap
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const int col = static_cast<int>(i) / per_column;
        draw_row(screen, row + 1 + static_cast<int>(i) % per_column, 2 + col * column_width, rows[i], data, ui, owners, cursor,
                 mode, slot_count, width, false);
    }
    return 1 + per_column;
}

}  // namespace gpupart::top
