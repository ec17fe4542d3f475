#include "top/top_input.hpp"

#include <algorithm>
#include <cstdlib>

#include "model/gpu_queries.hpp"
#include "top/top_input_parts.hpp"
#include "top/top_view.hpp"

namespace gpupart::top {
namespace {

// ---- the table --------------------------------------------------------------------------------------

void move_selection(UiState& ui, const TopData& data, int delta, bool to_end = false) {
    const auto shown = visible_processes(data, ui);
    if (shown.empty()) return;
    const TopProcess* selected = selected_process(data, ui);
    int index = 0;
    for (std::size_t i = 0; i < shown.size(); ++i)
        if (shown[i] == selected) index = static_cast<int>(i);
    index = to_end ? (delta < 0 ? 0 : static_cast<int>(shown.size()) - 1) : std::clamp(index + delta, 0, static_cast<int>(shown.size()) - 1);
    ui.selected_pid = shown[static_cast<std::size_t>(index)]->pid;
}

// ---- the floorplan ----------------------------------------------------------------------------------

struct Position {
    std::size_t row = 0;
    std::size_t slot = 0;
};

std::optional<Position> position_of(const std::vector<FloorRow>& rows, int bit) {
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::size_t s = 0; s < rows[r].slots.size(); ++s)
            if (rows[r].slots[s] == bit) return Position{r, s};
    return std::nullopt;
}

// The TPC of `row` nearest to `slot` (the cursor keeps its column when it moves between GPCs).
int nearest_in_row(const FloorRow& row, std::size_t slot) {
    int best = -1;
    std::size_t best_distance = ~std::size_t{0};
    for (std::size_t s = 0; s < row.slots.size(); ++s) {
        if (row.slots[s] < 0) continue;
        const std::size_t distance = s > slot ? s - slot : slot - s;
        if (distance < best_distance) {
            best = row.slots[s];
            best_distance = distance;
        }
    }
    return best;
}

void move_cursor(UiState& ui, const TopData& data, KeyCode direction) {
    const auto rows = floor_rows(data.gpu);
    const auto at = position_of(rows, cursor_bit(data, ui));
    if (!at) return;
    const FloorRow& row = rows[at->row];
    if (direction == KeyCode::left || direction == KeyCode::home) {
        for (std::size_t s = at->slot; s-- > 0;)
            if (row.slots[s] >= 0) {
                ui.cursor_bit = row.slots[s];
                if (direction == KeyCode::left) return;
            }
        return;
    }
    if (direction == KeyCode::right || direction == KeyCode::end) {
        for (std::size_t s = at->slot + 1; s < row.slots.size(); ++s)
            if (row.slots[s] >= 0) {
                ui.cursor_bit = row.slots[s];
                if (direction == KeyCode::right) return;
            }
        return;
    }
    const int step = direction == KeyCode::up || direction == KeyCode::page_up ? -1 : 1;
    const bool far = direction == KeyCode::page_up || direction == KeyCode::page_down;
    int target = -1;
    for (auto r = static_cast<long>(at->row) + step; r >= 0 && r < static_cast<long>(rows.size()); r += step) {
        const int bit = nearest_in_row(rows[static_cast<std::size_t>(r)], at->slot);
        if (bit < 0) continue;
        target = bit;
        if (!far) break;
    }
    if (target >= 0) ui.cursor_bit = target;
}

void toggle_gpc(UiState& ui, const TopData& data) {
    const int bit = cursor_bit(data, ui);
    const Tpc* tpc = bit >= 0 ? find_tpc(data.gpu, bit) : nullptr;
    if (!tpc) return;
    const TpcMask gpc = tpc->gpc ? gpc_tpcs(data.gpu, *tpc->gpc) : undetermined_gpc_tpcs(data.gpu);
    if ((ui.marked & gpc) == gpc)
        ui.marked &= ~gpc;
    else
        ui.marked |= gpc;
}

// Moves the chosen finding by `delta` and says which it is in the message line (the findings panel
// does not highlight it).
void choose_finding(UiState& ui, const TopData& data, int delta) {
    const int count = static_cast<int>(data.findings.size());
    if (count == 0) {
        ui.focus = Focus::table;
        return;
    }
    ui.finding_row = std::clamp(ui.finding_row + delta, 0, count - 1);
    const Finding& f = data.findings[static_cast<std::size_t>(ui.finding_row)];
    set_message(ui, fmt::format("finding {} of {}: {} · Enter explains it · ↑ ↓ another · Tab leaves", ui.finding_row + 1, count,
                                f.id.empty() ? f.rule : f.id), false);
}

// < > (and , .): the next or previous of the columns the table shows, as the sort menu lists them.
void cycle_sort(UiState& ui, const Screen& last, int step) {
    const auto keys = sort_choices(ui, last.table_columns);
    const auto at = std::find(keys.begin(), keys.end(), ui.sort) - keys.begin();
    const auto count = static_cast<long>(keys.size());
    sort_by(ui, keys[static_cast<std::size_t>((at + step + count) % count)]);
}

// ---- the frame --------------------------------------------------------------------------------------

Intent click(UiState& ui, const TopData& data, const Screen& last, const Key& key) {
    const Hit* hit = last.hit_at(key.row, key.column);
    if (!hit) return {};
    switch (hit->kind) {
        case HitKind::tpc:
            ui.focus = Focus::floorplan;
            ui.cursor_bit = hit->value;
            ui.marked.set(hit->value, !ui.marked.test(hit->value));
            return {};
        case HitKind::process:
            ui.focus = Focus::table;
            ui.selected_pid = hit->value;
            return {};
        case HitKind::key: return handle_key(ui, data, last, code_key(static_cast<KeyCode>(hit->value)));
        case HitKind::sort_column: {  // as htop: a click on a column's title sorts by it, on the sorted one inverts
            const auto column = static_cast<SortKey>(hit->value);
            if (ui.sort == column)
                ui.sort_descending = !ui.sort_descending;
            else
                sort_by(ui, column);
            return {};
        }
        case HitKind::menu_item: return {};
    }
    return {};
}

}  // namespace

bool search_next(UiState& ui, const TopData& data, const std::string& text, bool include_current) {
    const auto shown = visible_processes(data, ui);
    if (shown.empty() || text.empty()) return false;
    const TopProcess* selected = selected_process(data, ui);
    std::size_t start = 0;
    for (std::size_t i = 0; i < shown.size(); ++i)
        if (shown[i] == selected) start = i;
    for (std::size_t k = include_current ? 0 : 1; k <= shown.size(); ++k) {
        const TopProcess* candidate = shown[(start + k) % shown.size()];
        if (process_matches(*candidate, text)) {
            ui.selected_pid = candidate->pid;
            return true;
        }
    }
    return false;
}

Intent give_intent(UiState& ui, const TopData& data, const TpcMask& tpcs) {
    const TopProcess* target = selected_process(data, ui);
    if (!target) {
        set_message(ui, "no process to give TPCs to: select one in the table first", true);
        return {};
    }
    if (tpcs.empty()) {
        set_message(ui, "nothing marked: Space marks a TPC, g a whole GPC", true);
        return {};
    }
    return {IntentKind::give, tpcs, {target->pid, target->start_time}, {}};
}

void sort_by(UiState& ui, SortKey key) {
    ui.sort = key;
    ui.sort_descending = sorts_highest_first(key);
}

Intent handle_key(UiState& ui, const TopData& data, const Screen& last, const Key& key) {
    if (key.code == KeyCode::none || key.code == KeyCode::resize) return {};
    ui.table_first_row = last.table_first_row;
    if (last.table_rows > 1) ui.table_page = last.table_rows;
    if (ui.dialog != Dialog::none) return dialog_key(ui, data, last, key);
    if (key.code != KeyCode::mouse) ui.message.clear();
    const bool floorplan = ui.focus == Focus::floorplan;
    switch (key.code) {
        case KeyCode::f1: ui.dialog = Dialog::help; ui.help_first_line = 0; return {};
        case KeyCode::f2: ui.dialog = Dialog::setup; ui.menu_item = 0; return {};
        case KeyCode::f3: ui.dialog = Dialog::search; ui.input.clear(); return {};
        case KeyCode::f4: ui.dialog = Dialog::filter; ui.input = ui.filter; return {};
        case KeyCode::f6: {
            ui.dialog = Dialog::sort_menu;
            const auto keys = sort_choices(ui, last.table_columns);
            ui.menu_item = static_cast<int>(std::find(keys.begin(), keys.end(), ui.sort) - keys.begin());
            return {};
        }
        case KeyCode::f9: ui.dialog = Dialog::action_menu; ui.menu_item = 0; return {};
        // htop's keys that have no meaning for TPCs say what does the nearest thing, as k does.
        case KeyCode::f5: set_message(ui, "F5 (htop's tree): CUDA processes are listed flat here; F6 sorts, F4 filters", false); return {};
        // htop's F7 (nice -: more of the machine) and F8 (nice +: less): here a TPC more or less, as + and -.
        case KeyCode::f7: return {IntentKind::grow, {}, {}, target_processes(data, ui)};
        case KeyCode::f8: return {IntentKind::shrink, {}, {}, target_processes(data, ui)};
        case KeyCode::f10: return just(IntentKind::quit);
        case KeyCode::tab:
        case KeyCode::back_tab: {
            // table -> floorplan -> findings (when shown) -> table; Shift+Tab the other way.
            const bool findings = ui.settings.show_findings && !data.findings.empty();
            const Focus order[] = {Focus::table, Focus::floorplan, Focus::findings};
            const int count = findings ? 3 : 2;
            const int at = static_cast<int>(std::find(std::begin(order), std::end(order), ui.focus) - std::begin(order)) % count;
            ui.focus = order[(at + (key.code == KeyCode::tab ? 1 : count - 1)) % count];
            if (ui.focus == Focus::findings) choose_finding(ui, data, 0);
            return {};
        }
        case KeyCode::escape: ui.marked = {}; return {};
        case KeyCode::del:
            if (floorplan) return {IntentKind::release, give_selection(data, ui), {}, {}};
            return {};
        case KeyCode::mouse: return click(ui, data, last, key);
        case KeyCode::enter:
            if (ui.focus == Focus::findings) {
                if (!data.findings.empty()) ui.dialog = Dialog::finding;
                return {};
            }
            if (floorplan) return give_intent(ui, data, give_selection(data, ui));
            ui.dialog = Dialog::action_menu;
            ui.menu_item = 0;
            return {};
        case KeyCode::up:
        case KeyCode::down:
        case KeyCode::left:
        case KeyCode::right:
        case KeyCode::home:
        case KeyCode::end:
        case KeyCode::page_up:
        case KeyCode::page_down:
            if (ui.focus == Focus::findings) {
                if (key.code == KeyCode::up || key.code == KeyCode::down) choose_finding(ui, data, key.code == KeyCode::up ? -1 : 1);
            } else if (floorplan) {
                move_cursor(ui, data, key.code);
            } else {
                const int page = std::max(1, ui.table_page - 1);
                const bool end = key.code == KeyCode::home || key.code == KeyCode::end;
                const int delta = key.code == KeyCode::up ? -1 : key.code == KeyCode::down ? 1 : key.code == KeyCode::page_up ? -page
                                  : key.code == KeyCode::page_down ? page : key.code == KeyCode::home ? -1 : 1;
                if (key.code != KeyCode::left && key.code != KeyCode::right) move_selection(ui, data, delta, end);
            }
            return {};
        default: break;
    }
    if (key.code != KeyCode::character) return {};
    switch (key.ch) {
        case 'q': return just(IntentKind::quit);
        case '?':
        case 'h': ui.dialog = Dialog::help; ui.help_first_line = 0; return {};
        case 'S': ui.dialog = Dialog::setup; ui.menu_item = 0; return {};
        case '/': ui.dialog = Dialog::search; ui.input.clear(); return {};
        case '\\': ui.dialog = Dialog::filter; ui.input = ui.filter; return {};
        case '<':
        case ',':
        case '>':
        case '.': cycle_sort(ui, last, key.ch == '<' || key.ch == ',' ? -1 : 1); return {};
        case 'I': ui.sort_descending = !ui.sort_descending; return {};
        case 'u': return just(IntentKind::undo);
        case 'f':  // every finding whole, wrapped, scrolled (the panel cuts long ones at narrow widths)
            ui.dialog = Dialog::findings_list;
            ui.findings_first_line = 0;
            return {};
        case 'x':  // SMLP components (libgpupart.so's locking protocol): queues and holders, live
            ui.dialog = Dialog::smlp;
            ui.smlp_first_line = 0;
            return {};
        case 'k':  // htop's kill: gpupart top sends no signal, and says where its actions are instead
            set_message(ui, "k sends no signal here (htop's kill): F9 changes TPCs; kill(1) ends a process", true);
            return {};
        case 'G': return just(IntentKind::next_gpu);
        // htop's sort shortcuts: P processor, M memory (resident, as htop's MEM%), T time (here: launches so far).
        case 'P': sort_by(ui, SortKey::cpu); return {};
        case 'M': sort_by(ui, SortKey::rss); return {};
        case 'T': sort_by(ui, SortKey::launches); return {};
        case 0x0c: return just(IntentKind::redraw);  // Ctrl-L: a new sample and a whole repaint, as htop
        case 'v':  // the floorplan off and on: the table takes its rows (kept in toprc, F2)
            ui.settings.show_floorplan = !ui.settings.show_floorplan;
            if (!ui.settings.show_floorplan && ui.focus == Focus::floorplan) ui.focus = Focus::table;
            return {};
        case '+':
        case '=': return {IntentKind::grow, {}, {}, target_processes(data, ui)};
        case '-': return {IntentKind::shrink, {}, {}, target_processes(data, ui)};
        case 'g':
            ui.focus = Focus::floorplan;
            toggle_gpc(ui, data);
            return {};
        case ' ':
            if (floorplan) {
                const int bit = cursor_bit(data, ui);
                if (bit >= 0) ui.marked.set(bit, !ui.marked.test(bit));
            } else if (const TopProcess* selected = selected_process(data, ui)) {
                if (!ui.tagged.erase(selected->pid)) ui.tagged.insert(selected->pid);
                move_selection(ui, data, 1);  // as htop: tag and step to the next row
            }
            return {};
        default: return {};
    }
}

}  // namespace gpupart::top
