// The dialogs drawn over the frame: help (F1), setup (F2), sort (F6), actions (F9), and the
// confirmation of a planned change with the controller's findings.
#include <algorithm>

#include <fmt/format.h>

#include <sstream>

#include "controller/rules_doc.hpp"
#include "model/gpu_queries.hpp"
#include "top/top_layout_parts.hpp"

namespace gpupart::top {
namespace {

struct StyledLine {
    std::string text;
    Style style;
};

const std::vector<std::string>& help_lines() {
    static const std::vector<std::string> lines = {
        "Tab        focus table, floorplan, findings (Enter explains one)",
        "arrows     move the cursor (floorplan) or the selection (table)",
        "PgUp PgDn  page through the table · Home End: first, last",
        "Space      floorplan: mark a TPC (g: its whole GPC) · table: tag",
        "Enter      floorplan: give the marked TPCs (or the cursor's) to",
        "           the selected process, taking them from their holders",
        "Del        floorplan: release the marked TPCs (held by nobody)",
        "+ - F7 F8  a TPC more (+, F7) or less (-, F8): selected or tagged",
        "u          undo your last change  G  next GPU (one at a time)",
        "f          every finding whole    x  SMLP components: queues, holders",
        "F1 ?       this help          F2 S   setup (kept in toprc)",
        "F3 /       search             F4 \\   filter",
        "F6         sort menu          < >    sort column · I invert",
        "P M T      sort by CPU%, RSS (host memory), LAUNCHES (htop's TIME)",
        "v          floorplan off, on  ^L     sample now, repaint · F5 no tree",
        "F9         action menu        F10 q  quit   Esc  close, clear marks",
        "mouse      click a TPC, a process, a column title, a key below",
        "Not htop's: F9 changes TPCs, never sends a signal; k only says so",
        "(kill(1) ends a process). Every change is planned, shown with its",
        "findings and made only when you confirm; `gpupart history` lists them.",
    };
    return lines;
}

// Draws a box of `lines` centred on the screen; lines longer than the box are clipped.
void draw_lines_box(Screen& screen, const std::string& title, const std::vector<StyledLine>& lines, int min_width = 0) {
    int widest = std::max(min_width, text_width(title) + 4);
    for (const StyledLine& line : lines) widest = std::max(widest, text_width(line.text));
    const int width = std::min(screen.width() - 2, widest + 4);
    const int height = std::min(screen.height() - 1, static_cast<int>(lines.size()) + 2);
    const int top = std::max(0, (screen.height() - height) / 2);
    const int left = std::max(0, (screen.width() - width) / 2);
    screen.hits.clear();  // clicks go to the dialog only
    draw_box(screen, top, left, height, width, title);
    for (int i = 0; i < height - 2; ++i) {
        const StyledLine& line = lines[static_cast<std::size_t>(i)];
        if (line.style.role == Role::menu_selected) screen.fill(top + 1 + i, left + 1, width - 2, U' ', line.style);
        screen.put(top + 1 + i, left + 2, fit(line.text, width - 4), line.style, width - 4);
    }
}

// The help box: its lines scroll (↑ ↓ PgUp PgDn Home End) where the terminal is shorter than they are
// (60x16); the last line of the box says where it is and that any other key closes it.
void draw_help(Screen& screen, const UiState& ui) {
    int widest = 0;
    for (const std::string& line : help_lines()) widest = std::max(widest, text_width(line));
    const int width = std::min(screen.width() - 2, widest + 4);
    // Narrower than its lines (60 columns), each is wrapped under its key's column rather than cut.
    std::vector<std::string> lines;
    for (const std::string& line : help_lines()) {
        if (text_width(line) <= width - 4) {
            lines.push_back(line);
            continue;
        }
        const bool keyed = line.size() > 11 && line.substr(0, 11).ends_with("  ");  // "Tab        ...", or its next line
        const std::string indent = keyed ? std::string(11, ' ') : "";
        const auto parts = wrap(keyed ? line.substr(11) : line, width - 4 - static_cast<int>(indent.size()));
        for (std::size_t i = 0; i < parts.size(); ++i) lines.push_back((i == 0 && keyed ? line.substr(0, 11) : indent) + parts[i]);
    }
    const int total = static_cast<int>(lines.size());
    const int height = std::min(screen.height() - 1, total + 3);
    const int rows = std::max(1, height - 3);  // inside the box, less the line of keys
    const int first = std::clamp(ui.help_first_line, 0, std::max(0, total - rows));
    screen.findings_lines = total;  // what the scroll keys read back (as the findings view)
    screen.findings_rows = rows;
    screen.findings_first_line = first;
    const int top = std::max(0, (screen.height() - height) / 2);
    const int left = std::max(0, (screen.width() - width) / 2);
    screen.hits.clear();  // clicks go to the dialog only
    draw_box(screen, top, left, height, width, "gpupart top · keys");
    for (int i = 0; i < rows && first + i < total; ++i)
        screen.put(top + 1 + i, left + 2, fit(lines[static_cast<std::size_t>(first + i)], width - 4), {Role::normal}, width - 4);
    const std::string keys = total > rows ? fmt::format("{}-{} of {} · ↑ ↓ PgUp PgDn scroll · other keys close", first + 1,
                                                        first + rows, total)
                                          : "any key closes this help";
    screen.put(top + height - 2, left + 2, fit(keys, width - 4), {Role::dim}, width - 4);
}

void draw_menu(Screen& screen, const std::string& title, const std::vector<std::string>& items, const std::vector<bool>& enabled,
               int highlighted, const std::string& hint) {
    std::vector<StyledLine> lines;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const bool on = enabled.empty() || enabled[i];
        const bool current = static_cast<int>(i) == highlighted;
        lines.push_back({fmt::format("{} {}", current ? "▸" : " ", items[i]),
                         current ? Style{Role::menu_selected, true} : Style{on ? Role::normal : Role::menu_disabled}});
    }
    lines.push_back({"", {}});
    lines.push_back({hint, {Role::dim}});
    draw_lines_box(screen, title, lines);
    // Menu items are the box's rows 1..n, centred as draw_lines_box placed them.
    const int height = std::min(screen.height() - 1, static_cast<int>(lines.size()) + 2);
    const int top = std::max(0, (screen.height() - height) / 2);
    for (std::size_t i = 0; i < items.size() && static_cast<int>(i) < height - 2; ++i)
        screen.hits.push_back({top + 1 + static_cast<int>(i), 0, screen.width(), HitKind::menu_item, static_cast<int>(i)});
}

std::string mask_text(bool partitioned, const TpcMask& mask) { return partitioned ? mask.to_list() : "all"; }

void draw_confirm(Screen& screen, const TopData& data, const PendingPlan& pending) {
    const int inner = std::min(screen.width() - 6, 110);
    std::vector<StyledLine> lines;
    const Plan& plan = pending.plan;
    if (plan.changes_nothing()) lines.push_back({"no change to make", {Role::dim}});
    if (plan.rules)  // an undo of a profile apply or disarm puts the rules for later processes back too
        lines.push_back({fit(rules_change_text(*plan.rules, "→"), inner), {Role::normal}});
    for (const PlannedChange& change : plan.changes) {
        const TopProcess* p = find_process(data, change.pid);
        const std::string who = fmt::format("{} {} {}", p ? std::string(1, p->letter) : "?", change.pid, change.command);
        lines.push_back({fit(who, inner), {Role::value, true}});
        // The counts first: a GPC's TPC numbers are strided, so masks of whole GPCs are long lists, and a cut
        // line must still say how many TPCs the process has before and after.
        lines.push_back({fit(fmt::format("    {} TPCs → {}: {} → {}",
                                         (change.before_partitioned ? change.before & real_tpcs(data.gpu) : real_tpcs(data.gpu)).count(),
                                         (change.after_partitioned ? change.after & real_tpcs(data.gpu) : real_tpcs(data.gpu)).count(),
                                         mask_text(change.before_partitioned, change.before),
                                         mask_text(change.after_partitioned, change.after)),
                             inner),
                         {Role::normal}});
    }
    lines.push_back({"", {}});
    // What this change brings: findings that hold already are in the findings panel, counted here only.
    int already = 0;
    for (const Finding& finding : plan.findings) {
        if (finding.severity != Severity::error && std::find(data.findings.begin(), data.findings.end(), finding) != data.findings.end()) {
            ++already;
            continue;
        }
        const Role role = finding.severity == Severity::error ? Role::finding_error
                          : finding.severity == Severity::warning ? Role::finding_warning : Role::finding_info;
        const auto wrapped = wrap(fmt::format("{}: {} [{}]", to_string(finding.severity), finding.message, finding.rule), inner);
        for (std::size_t i = 0; i < wrapped.size(); ++i) lines.push_back({(i ? "  " : "") + wrapped[i], {role, i == 0}});
    }
    if (static_cast<int>(plan.findings.size()) == already) lines.push_back({"no new finding", {Role::good}});
    if (already > 0)
        lines.push_back({fmt::format("({} finding{} that hold{} already: see the findings panel)", already, already == 1 ? "" : "s",
                                     already == 1 ? "s" : ""),
                         {Role::dim}});
    // Keep the answer line visible: drop findings lines from the end if the screen is short.
    const std::size_t room = static_cast<std::size_t>(std::max(3, screen.height() - 5));
    if (lines.size() > room) {
        const std::size_t dropped = lines.size() - room + 1;
        lines.resize(room - 1);
        lines.push_back({fmt::format("… {} more lines (gpupart set --dry-run shows them all)", dropped), {Role::dim}});
    }
    lines.push_back({"", {}});
    if (plan.refused())
        lines.push_back({"Refused: nothing will change.   Esc closes", {Role::finding_error, true}});
    else
        // There is no redo: an undo is final, and u after it undoes the change before it.
        lines.push_back({plan.undoes ? "Enter or y undoes it   ·   Esc or n cancels   ·   no redo"
                                     : "Enter or y applies   ·   Esc or n cancels   (u undoes it later)",
                         {Role::good, true}});
    draw_lines_box(screen, pending.title, lines, std::min(inner, 60));
}

}  // namespace

std::string fit(const std::string& text, int width) {
    if (width <= 0) return "";
    const std::u32string chars = decode_utf8(text);
    if (static_cast<int>(chars.size()) <= width) return text;
    std::string out;
    for (int i = 0; i < width - 1; ++i) out += encode_utf8(chars[static_cast<std::size_t>(i)]);
    return out + "…";
}

std::vector<std::string> wrap(const std::string& text, int width) {
    std::vector<std::string> lines;
    std::string line;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(' ', start);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(start, end - start);
        if (!line.empty() && text_width(line) + 1 + text_width(word) > width) {
            lines.push_back(line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
        while (text_width(line) > width) {  // a word longer than a line is cut
            lines.push_back(fit(line, width));
            line = line.substr(std::min(line.size(), static_cast<std::size_t>(width - 1)));
        }
        start = end + 1;
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

void draw_box(Screen& screen, int top, int left, int height, int width, const std::string& title) {
    const Style border{Role::box};
    for (int r = top; r < top + height; ++r) screen.fill(r, left, width, U' ', border);
    screen.fill(top, left + 1, width - 2, U'─', border);
    screen.fill(top + height - 1, left + 1, width - 2, U'─', border);
    for (int r = top + 1; r < top + height - 1; ++r) {
        screen.put(r, left, "│", border);
        screen.put(r, left + width - 1, "│", border);
    }
    screen.put(top, left, "┌", border);
    screen.put(top, left + width - 1, "┐", border);
    screen.put(top + height - 1, left, "└", border);
    screen.put(top + height - 1, left + width - 1, "┘", border);
    screen.put(top, left + 2, " " + fit(title, width - 6) + " ", {Role::box_title, true});
}

void draw_dialog(Screen& screen, const TopData& data, const UiState& ui) {
    switch (ui.dialog) {
        case Dialog::none:
        case Dialog::search:
        case Dialog::filter:
            return;  // the prompt lives in the status line
        case Dialog::help: draw_help(screen, ui); return;
        case Dialog::setup: {
            const Settings& s = ui.settings;
            const std::vector<std::string> items = {
                fmt::format("[{}] colours (-C starts without)", s.colour ? "x" : " "),
                fmt::format("    refresh every {:.1f} s   ← → change (-d in tenths)", s.delay_tenths / 10.0),
                fmt::format("[{}] findings panel", s.show_findings ? "x" : " "),
                fmt::format("[{}] SM ids under each TPC (terminals of 120x50 and more)", s.show_sm_ids ? "x" : " "),
                fmt::format("[{}] ASCII only, no line drawing (set where the locale is not UTF-8)", s.ascii ? "x" : " "),
                fmt::format("[{}] floorplan (v; off: the process table takes its rows)", s.show_floorplan ? "x" : " "),
            };
            draw_menu(screen, "Setup", items, {}, ui.menu_item, "↑ ↓ choose · Space toggles · ← → delay · kept in toprc · Esc closes");
            return;
        }
        case Dialog::sort_menu: {
            // The columns the table shows at this width (the table was laid out before the dialog).
            std::vector<std::string> items;
            for (SortKey key : sort_choices(ui, screen.table_columns)) {
                const bool shown = std::find(screen.table_columns.begin(), screen.table_columns.end(), key) != screen.table_columns.end();
                items.push_back(fmt::format("{}{}{}", sort_key_name(key),
                                            key == ui.sort ? (ui.sort_descending ? "   (now, descending)" : "   (now)") : "",
                                            shown ? "" : " (not shown at this width)"));
            }
            draw_menu(screen, "Sort by", items, {}, ui.menu_item, "↑ ↓ choose · Enter sorts · I inverts · Esc closes");
            return;
        }
        case Dialog::action_menu: {
            std::vector<std::string> items;
            std::vector<bool> enabled;
            int number = 1;
            for (const MenuItem& item : action_menu(data, ui)) {
                items.push_back(fmt::format("{}  {}", number++, item.label));
                enabled.push_back(item.enabled);
            }
            draw_menu(screen, "Actions", items, enabled, ui.menu_item, "↑ ↓ or a number choose · Enter acts · Esc closes");
            return;
        }
        case Dialog::confirm:
            if (ui.pending) draw_confirm(screen, data, *ui.pending);
            return;
        case Dialog::findings_list: draw_findings_view(screen, data, ui); return;
        case Dialog::smlp: draw_smlp_view(screen, data, ui); return;
        case Dialog::finding: {
            if (data.findings.empty()) return;
            const Finding& f = data.findings[static_cast<std::size_t>(std::clamp<int>(ui.finding_row, 0, static_cast<int>(data.findings.size()) - 1))];
            // The entry of docs/rules.md for it (built in): what it means, why, what to do.
            const int inner = std::max(20, std::min(screen.width() - 8, 90));
            std::vector<StyledLine> lines;
            for (const auto& part : wrap(fmt::format("{}: {}", to_string(f.severity), f.message), inner))
                lines.push_back({part, {severity_role(f.severity)}});
            lines.push_back({"", {}});
            const auto entry = rules_entry(f.id);
            std::istringstream text(entry ? *entry : "This finding has no entry in docs/rules.md.");
            for (std::string paragraph; std::getline(text, paragraph);)
                for (const auto& part : wrap(paragraph, inner)) lines.push_back({part, {Role::normal}});
            lines.push_back({"", {}});
            lines.push_back({fmt::format("docs/rules.md#{} · any key closes", f.id), {Role::dim}});
            draw_lines_box(screen, fmt::format("Finding {}", f.id), lines);
            return;
        }
    }
}

}  // namespace gpupart::top
