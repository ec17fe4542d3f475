// The keys of an open dialog in `gpupart top`: the menus (F2 setup, F6 sort, F9 actions), the search and
// filter prompts, the confirmation of a planned change, and the findings view (f). Help and a finding's
// entry close on any key.
#include <algorithm>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "top/top_input_parts.hpp"
#include "top/top_view.hpp"

namespace gpupart::top {
namespace {

Intent menu_action(UiState& ui, const TopData& data, const MenuItem& item) {
    ui.dialog = Dialog::none;
    if (!item.enabled) {
        set_message(ui, "not offered: it needs a selection first, or would change nothing (F1 explains the keys)", true);
        return {};
    }
    switch (item.action) {
        case MenuAction::give_marked: return give_intent(ui, data, ui.marked & real_tpcs(data.gpu));
        case MenuAction::give_gpc: {
            const Tpc* tpc = find_tpc(data.gpu, cursor_bit(data, ui));
            return give_intent(ui, data, tpc && tpc->gpc ? gpc_tpcs(data.gpu, *tpc->gpc) : TpcMask{});
        }
        case MenuAction::release: return {IntentKind::release, give_selection(data, ui), {}, {}};
        case MenuAction::grow: return {IntentKind::grow, {}, {}, target_processes(data, ui)};
        case MenuAction::shrink: return {IntentKind::shrink, {}, {}, target_processes(data, ui)};
        case MenuAction::undo: return just(IntentKind::undo);
        case MenuAction::clear_marks: ui.marked = {}; return {};
        case MenuAction::untag: ui.tagged.clear(); return {};
    }
    return {};
}

int menu_size(const UiState& ui, const TopData& data, const Screen& last) {
    switch (ui.dialog) {
        case Dialog::setup: return kSetupItems;
        case Dialog::sort_menu: return static_cast<int>(sort_choices(ui, last.table_columns).size());
        case Dialog::action_menu: return static_cast<int>(action_menu(data, ui).size());
        default: return 0;
    }
}

void change_delay(Settings& settings, int direction) {
    const int step = settings.delay_tenths + direction <= 10 ? 1 : 5;
    settings.delay_tenths = std::clamp(settings.delay_tenths + direction * step, 1, 600);
}

Intent choose(UiState& ui, const TopData& data, const Screen& last, int item) {
    switch (ui.dialog) {
        case Dialog::setup:
            if (item == 0) ui.settings.colour = !ui.settings.colour;
            if (item == 2) ui.settings.show_findings = !ui.settings.show_findings;
            if (item == 3) ui.settings.show_sm_ids = !ui.settings.show_sm_ids;
            if (item == 4) ui.settings.ascii = !ui.settings.ascii;
            if (item == 5) ui.settings.show_floorplan = !ui.settings.show_floorplan;
            return {};
        case Dialog::sort_menu:
            sort_by(ui, sort_choices(ui, last.table_columns)[static_cast<std::size_t>(item)]);
            ui.dialog = Dialog::none;
            return {};
        case Dialog::action_menu: return menu_action(ui, data, action_menu(data, ui)[static_cast<std::size_t>(item)]);
        default: return {};
    }
}

Intent menu_key(UiState& ui, const TopData& data, const Screen& last, const Key& key) {
    const int size = menu_size(ui, data, last);
    const KeyCode own = ui.dialog == Dialog::setup ? KeyCode::f2 : ui.dialog == Dialog::sort_menu ? KeyCode::f6 : KeyCode::f9;
    if (key.code == KeyCode::escape || key.code == own || key.code == KeyCode::f10 || is(key, 'q')) {
        ui.dialog = Dialog::none;
        return {};
    }
    if (key.code == KeyCode::up) ui.menu_item = (ui.menu_item + size - 1) % size;
    if (key.code == KeyCode::down) ui.menu_item = (ui.menu_item + 1) % size;
    if (ui.dialog == Dialog::setup && ui.menu_item == 1 && (key.code == KeyCode::left || key.code == KeyCode::right))
        change_delay(ui.settings, key.code == KeyCode::left ? -1 : 1);
    if (ui.dialog == Dialog::sort_menu && is(key, 'I')) ui.sort_descending = !ui.sort_descending;
    if (key.code == KeyCode::enter || is(key, ' ')) return choose(ui, data, last, ui.menu_item);
    if (key.code == KeyCode::character && key.ch >= '1' && key.ch < static_cast<char32_t>('1' + size) && ui.dialog == Dialog::action_menu)
        return choose(ui, data, last, static_cast<int>(key.ch - '1'));
    if (key.code == KeyCode::mouse)
        if (const Hit* hit = last.hit_at(key.row, key.column); hit && hit->kind == HitKind::menu_item) {
            ui.menu_item = hit->value;
            return choose(ui, data, last, hit->value);
        }
    return {};
}

Intent prompt_key(UiState& ui, const TopData& data, const Key& key) {
    const bool search = ui.dialog == Dialog::search;
    if (key.code == KeyCode::escape) {
        if (!search) ui.filter.clear();
        ui.dialog = Dialog::none;
        return {};
    }
    if (key.code == KeyCode::enter) {
        if (search) ui.search = ui.input;
        ui.dialog = Dialog::none;
        return {};
    }
    if (search && key.code == KeyCode::f3) {
        if (!search_next(ui, data, ui.input, false)) set_message(ui, "no other process matches '" + ui.input + "'", true);
        return {};
    }
    if (key.code == KeyCode::backspace && !ui.input.empty()) {
        ui.input.pop_back();
    } else if (key.code == KeyCode::character && key.ch >= 0x20 && key.ch < 0x7f) {
        ui.input += static_cast<char>(key.ch);
    } else {
        return {};
    }
    if (search) {
        ui.message.clear();
        if (!ui.input.empty() && !search_next(ui, data, ui.input, true)) set_message(ui, "no process matches '" + ui.input + "'", true);
    } else {
        ui.filter = ui.input;
    }
    return {};
}

Intent confirm_key(UiState& ui, const Key& key) {
    const bool refused = !ui.pending || ui.pending->plan.refused();
    if (!refused && (key.code == KeyCode::enter || is(key, 'y') || is(key, 'Y'))) return just(IntentKind::apply);
    if (key.code == KeyCode::escape || key.code == KeyCode::enter || is(key, 'n') || is(key, 'N') || is(key, 'q')) {
        ui.dialog = Dialog::none;
        ui.pending.reset();
        set_message(ui, refused ? "refused: nothing changed" : "cancelled: nothing changed", refused);
    }
    return {};
}

// The full-screen views (f: findings, x: SMLP components) scroll by lines and pages of what the last frame
// showed; Esc, q, Enter or their own key close them.
Intent full_view_key(UiState& ui, int& first_line, char32_t own_key, const Screen& last, const Key& key) {
    if (key.code == KeyCode::escape || key.code == KeyCode::enter || key.code == KeyCode::f10 || is(key, 'q') || is(key, own_key)) {
        ui.dialog = Dialog::none;
        return {};
    }
    const int page = std::max(1, last.findings_rows - 1);
    const int most = std::max(0, last.findings_lines - last.findings_rows);
    int first = last.findings_first_line;
    switch (key.code) {
        case KeyCode::up: first -= 1; break;
        case KeyCode::down: first += 1; break;
        case KeyCode::page_up: first -= page; break;
        case KeyCode::page_down: first += page; break;
        case KeyCode::home: first = 0; break;
        case KeyCode::end: first = most; break;
        default: if (is(key, ' ')) first += page; break;  // as less(1)
    }
    first_line = std::clamp(first, 0, most);
    return {};
}

}  // namespace

Intent dialog_key(UiState& ui, const TopData& data, const Screen& last, const Key& key) {
    switch (ui.dialog) {
        case Dialog::help: {
            // Scroll keys scroll it (60x16 shows part of it); any other key closes it, as before.
            const KeyCode scroll[] = {KeyCode::up, KeyCode::down, KeyCode::page_up, KeyCode::page_down, KeyCode::home, KeyCode::end};
            if (std::find(std::begin(scroll), std::end(scroll), key.code) != std::end(scroll)) {
                full_view_key(ui, ui.help_first_line, U'?', last, key);
                return {};
            }
            ui.dialog = Dialog::none;
            return {};
        }
        case Dialog::finding: ui.dialog = Dialog::none; return {};
        case Dialog::setup:
        case Dialog::sort_menu:
        case Dialog::action_menu: return menu_key(ui, data, last, key);
        case Dialog::search:
        case Dialog::filter: return prompt_key(ui, data, key);
        case Dialog::confirm: return confirm_key(ui, key);
        case Dialog::findings_list: return full_view_key(ui, ui.findings_first_line, U'f', last, key);
        case Dialog::smlp: return full_view_key(ui, ui.smlp_first_line, U'x', last, key);
        case Dialog::none: break;
    }
    return {};
}

}  // namespace gpupart::top
