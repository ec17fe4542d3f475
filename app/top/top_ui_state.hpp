#pragma once
// What the user has chosen in `gpupart top`: focus, cursor, marks, tags, sort, filter, open dialog.
// Plain data changed by the key handler (top_input) and read by the layout (top_layout).
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "controller/controller.hpp"
#include "model/tpc_mask.hpp"

namespace gpupart::top {

enum class Focus { floorplan, table, findings };  // Tab: table, floorplan, findings (when shown)

// One key per column of the process table, in the order of the widest table (every column can be sorted by,
// as in htop).
enum class SortKey { pid, user, tpcs, sms, share, rate, launches, memory, gpu, cpu, rss, scaling, app, shim, requested, applied, command };
inline constexpr SortKey kSortKeys[] = {SortKey::pid,      SortKey::user,   SortKey::tpcs, SortKey::sms,       SortKey::share,
                                        SortKey::rate,     SortKey::launches, SortKey::memory, SortKey::gpu, SortKey::cpu,   SortKey::rss,      SortKey::scaling,
                                        SortKey::app,      SortKey::shim,     SortKey::requested, SortKey::applied, SortKey::command};
std::string_view sort_key_name(SortKey key);  // the column title: "PID", "LAUNCH/s", ...
std::optional<SortKey> sort_key_named(std::string_view name);  // the inverse (case-insensitive), for the settings file
// As htop: counts, rates and amounts sort highest first when chosen; names, masks and the PID lowest first (I reverses).
inline bool sorts_highest_first(SortKey key) {
    switch (key) {
        case SortKey::tpcs: case SortKey::sms: case SortKey::share: case SortKey::rate: case SortKey::launches:
        case SortKey::memory: case SortKey::gpu: case SortKey::cpu: case SortKey::rss: case SortKey::app: return true;
        default: return false;
    }
}

// At most one dialog is open; the key handler sends keys to it first.
enum class Dialog { none, help, setup, sort_menu, action_menu, search, filter, confirm, finding, findings_list, smlp };

// Settings of the setup dialog (F2), kept in toprc (top_settings_file); `-C` and `-d` set the first two for a session.
struct Settings {
    bool colour = true;
    int delay_tenths = 10;
    bool show_findings = true;
    bool show_sm_ids = true;  // a second floorplan line of SM ids, where the terminal is tall enough
    bool ascii = false;       // no UTF-8 glyphs (set at start where the locale is not UTF-8)
    bool show_floorplan = true;  // v hides it: the process table takes its rows (a node with many processes)
    bool operator==(const Settings&) const = default;
};
inline constexpr int kSetupItems = 6;  // colour, delay, findings, SM ids, ASCII, floorplan

// A plan waiting for the user's confirmation, with what the dialog says about it.
struct PendingPlan {
    Plan plan;
    std::string title;  // "Give 9-16 to 1234 (llm-serving)?"
};

struct UiState {
    Focus focus = Focus::table;
    int cursor_bit = -1;            // floorplan cursor: a real TPC's mask bit (-1: the first one)
    TpcMask marked;                 // TPCs marked in the floorplan (Space, g, mouse)
    int selected_pid = 0;           // the table's selected process (0: the first one)
    std::set<int> tagged;           // processes tagged with Space in the table
    int table_first_row = 0;        // scroll position of the table (kept by the layout)
    int table_page = 10;            // rows the table showed last (PgUp/PgDn step)
    int finding_row = 0;            // the chosen finding while the findings have the focus (Enter explains it)
    int findings_first_line = 0;    // scroll position of the findings view (f), in wrapped lines
    int smlp_first_line = 0;        // scroll position of the SMLP components view (x), in lines
    int help_first_line = 0;        // scroll position of the help box (F1), in lines
    SortKey sort = SortKey::pid;
    bool sort_descending = false;
    std::string filter;             // table shows only processes matching it (F4 \)
    std::string search;             // last search (F3 /)
    std::string input;              // text being typed in the search or filter prompt
    Dialog dialog = Dialog::none;
    int menu_item = 0;              // highlighted item of the open menu
    std::optional<PendingPlan> pending;
    std::string message;            // one line under the table: the last action's result
    bool message_is_error = false;
    Settings settings;
    bool batch = false;             // --batch: frames for a file or a pipe, without cursor marks, status line or keys
};

}  // namespace gpupart::top
