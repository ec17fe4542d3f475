// The process table: one row per partitioned process (filtered, sorted), its owner letter in the
// floorplan's colour, the columns that fit the width, and the selected row kept in view.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "top/top_key.hpp"
#include "top/top_layout_parts.hpp"

namespace gpupart::top {
namespace {

enum class ColumnId { pid, user, tpcs, sms, share, rate, launches, memory, gpu, cpu, rss, scaling, app, shim, requested, applied, command };

struct Column {
    ColumnId id;
    std::string title;
    int width = 0;  // 0: the rest of the line
    bool right = false;
    SortKey key;
};

std::string rate_text(const std::optional<double>& rate) {
    if (!rate) return "-";
    return *rate < 100 ? fmt::format("{:.1f}", *rate) : fmt::format("{:.0f}", *rate);
}

constexpr int kCommandWidth = 30;
constexpr int kMaskLeastWidth = 16;  // REQUESTED narrower than this is dropped instead

// APP only once a program chooses its own masks (libgpupart.so): until then it would be a column of "-".
bool any_app_masks(const TopData& data) {
    return std::any_of(data.processes.begin(), data.processes.end(), [](const TopProcess& p) { return p.app_masks; });
}

std::vector<Column> table_columns(const TopData& data, bool wide, int width) {
    using enum ColumnId;
    if (!wide) {
        std::vector<Column> narrow = {{pid, "PID", 7, true, SortKey::pid},        {user, "USER", 8, false, SortKey::user},
                                      {tpcs, "TPCS", 4, true, SortKey::tpcs},     {sms, "SMS", 3, true, SortKey::sms},
                                      {share, "SHARE", 5, true, SortKey::share},  {rate, "LAUNCH/s", 9, true, SortKey::rate},
                                      {memory, "MEM", 4, true, SortKey::memory},  {shim, "SHIM", 8, false, SortKey::shim},
                                      {command, "COMMAND", 0, false, SortKey::command}};
        if (any_app_masks(data)) narrow.insert(narrow.end() - 2, Column{app, "APP", 3, false, SortKey::app});
        return narrow;
    }
    int mask_width = 9;
    int applied_width = 7;
    for (const TopProcess& p : data.processes) {
        mask_width = std::max(mask_width, static_cast<int>(tpcs_text(p).size()));
        applied_width = std::max(applied_width, static_cast<int>(p.applied.size()));
    }
    std::vector<Column> columns = {{pid, "PID", 7, true, SortKey::pid},
                                   {user, "USER", 10, false, SortKey::user},
                                   {tpcs, "TPCS", 4, true, SortKey::tpcs},
                                   {sms, "SMS", 4, true, SortKey::sms},
                                   {share, "SHARE", 5, true, SortKey::share},
                                   {rate, "LAUNCH/s", 9, true, SortKey::rate},
                                   {launches, "LAUNCHES", 10, true, SortKey::launches},
                                   {memory, "MEM", 5, true, SortKey::memory},
                                   {gpu, "GPU%", 4, true, SortKey::gpu},
                                   {cpu, "CPU%", 5, true, SortKey::cpu},
                                   {rss, "RSS", 5, true, SortKey::rss},
                                   {scaling, "SCALING", 13, false, SortKey::scaling},
                                   {app, "APP", 3, false, SortKey::app},
                                   {shim, "SHIM", 11, false, SortKey::shim},
                                   {requested, "REQUESTED", std::min(mask_width, 32), false, SortKey::requested},
                                   {applied, "APPLIED", std::min(applied_width, 32), false, SortKey::applied},
                                   {command, "COMMAND", 0, false, SortKey::command}};
    // SCALING only once a process has a saved curve (gpupart measure): until then it would be a column of "-".
    if (std::none_of(data.processes.begin(), data.processes.end(), [](const TopProcess& p) { return !p.scaling.empty(); }))
        std::erase_if(columns, [](const Column& column) { return column.id == scaling; });
    if (!any_app_masks(data)) std::erase_if(columns, [](const Column& column) { return column.id == app; });
    // The command keeps at least kCommandWidth columns: the extra columns go first, least useful first.
    // REQUESTED narrows (its masks cut with "…") before it goes: a partition of whole GPCs names TPC numbers
    // striped across GPCs (the driver numbers SMs round the GPCs), so its list is long, and 120 columns still show it.
    const auto used_now = [&] {
        int used = 4;
        for (const Column& column : columns) used += column.width + 1;
        return used;
    };
    // APP goes last: three columns that say a program chooses its own masks under REQUESTED.
    for (const ColumnId extra : {applied, scaling, launches, rss, cpu, gpu, requested, app}) {
        if (width - used_now() >= kCommandWidth) break;
        if (extra == requested) {
            auto it = std::find_if(columns.begin(), columns.end(), [](const Column& column) { return column.id == requested; });
            const int narrower = it->width - (kCommandWidth - (width - used_now()));
            if (narrower >= kMaskLeastWidth) {
                it->width = narrower;
                break;
            }
        }
        std::erase_if(columns, [extra](const Column& column) { return column.id == extra; });
    }
    return columns;
}

// The part of a command line that tells processes apart, first: the program's path is dropped, and a program
// several processes share (python3, gpupart-demo-worker) goes after its arguments, so that a narrow COMMAND
// column shows "serve.py --port 80 · python3" rather than the same "/usr/bin/python3 …" on every row.
std::string command_text(const TopData& data, const TopProcess& p) {
    const auto program_of = [](const std::string& command) {
        const std::string first = command.substr(0, command.find(' '));
        const auto slash = first.rfind('/');
        return slash == std::string::npos ? first : first.substr(slash + 1);
    };
    const std::string program = program_of(p.command);
    const auto space = p.command.find(' ');
    const std::string args = space == std::string::npos ? "" : p.command.substr(space + 1);
    const auto sharing = std::count_if(data.processes.begin(), data.processes.end(),
                                       [&](const TopProcess& other) { return program_of(other.command) == program; });
    if (sharing < 2 || args.empty()) return args.empty() ? program : program + " " + args;
    return args + " · " + program;
}

std::string cell_text(const TopData& data, const TopProcess& p, ColumnId id) {
    const int real = real_tpcs(data.gpu).count();
    switch (id) {
        case ColumnId::pid: return std::to_string(p.pid);
        case ColumnId::user: return p.user;
        case ColumnId::tpcs: return p.partitioned ? std::to_string(tpc_count(data, p)) : "all";
        case ColumnId::sms: return std::to_string(sm_count(data, p));
        case ColumnId::share: return real > 0 ? fmt::format("{}%", (100 * tpc_count(data, p) + real / 2) / real) : "-";
        case ColumnId::rate: return rate_text(p.launches_per_second);
        case ColumnId::launches: return std::to_string(p.launches);
        case ColumnId::memory: return p.memory_bytes ? fmt::format("{}M", *p.memory_bytes >> 20) : "-";
        case ColumnId::gpu: return p.gpu_percent ? std::to_string(*p.gpu_percent) : "-";
        case ColumnId::cpu: return p.cpu_percent ? fmt::format("{:.0f}", *p.cpu_percent) : "-";
        case ColumnId::rss: return p.rss_bytes ? (*p.rss_bytes >= (10ull << 30) ? fmt::format("{}G", *p.rss_bytes >> 30)
                                                                                 : fmt::format("{}M", *p.rss_bytes >> 20))
                                               : "-";
        case ColumnId::scaling: return p.scaling.empty() ? "-" : p.scaling;
        case ColumnId::app: return p.app_masks ? "yes" : "-";  // the program chooses its own masks (libgpupart.so)
        case ColumnId::shim: return p.applied == "(next launch)" ? "pending" : p.shim;
        case ColumnId::requested: return tpcs_text(p);
        case ColumnId::applied: return p.applied;
        case ColumnId::command: return command_text(data, p);
    }
    return "?";
}

// `width`: the screen's; a command line that fits the COMMAND column whole is shown as it is.
std::vector<std::string> row_cells(const TopData& data, const TopProcess& p, const std::vector<Column>& columns, int width) {
    std::vector<std::string> cells;
    int used = 4;
    for (const Column& column : columns) used += column.width > 0 ? column.width + 1 : 0;
    for (const Column& column : columns)
        cells.push_back(column.id == ColumnId::command && text_width(p.command) <= width - used ? p.command
                                                                                                : cell_text(data, p, column.id));
    return cells;
}

// Where each column lands after the 4-cell prefix (letter, tag, cursor) on a line of `width` cells: the
// columns past the edge get none, the last one takes the rest of the line.
struct Span {
    int column = 0;
    int width = 0;
};
std::vector<Span> spans_of(const std::vector<Column>& columns, int width) {
    std::vector<Span> spans;
    int c = 4;
    for (std::size_t i = 0; i < columns.size() && c < width; ++i) {
        spans.push_back({c, columns[i].width > 0 ? columns[i].width : width - c});
        c += spans.back().width + 1;
    }
    return spans;
}

// Writes the cells of one table line after the 4-column prefix; styles stay per line.
void put_cells(Screen& screen, int row, const std::vector<Column>& columns, const std::vector<std::string>& cells, Style style,
               std::optional<SortKey> sorted = {}) {
    const auto spans = spans_of(columns, screen.width());
    for (std::size_t i = 0; i < spans.size(); ++i) {
        const Column& column = columns[i];
        const int width = spans[i].width;
        const std::string text = fit(cells[i], width);
        const std::string padded = column.right ? fmt::format("{:>{}}", text, width) : text;
        Style cell_style = style;
        if (sorted && column.key == sorted) cell_style = {Role::sorted_header, true, style.reverse};
        screen.put(row, spans[i].column, padded, cell_style, width);
    }
}

// A filter hides processes: the header row says so, highlighted, at its right end, or in place of the
// COMMAND title where the column has no room for both (80 columns), as htop marks a filter (
// item 7). Where there is no COMMAND column (60 columns), the footer's F4 says FILTER (top_layout).
void put_filter_marker(Screen& screen, int row, const std::vector<Column>& columns, const std::vector<std::string>& titles,
                       const UiState& ui) {
    if (ui.filter.empty()) return;
    const auto spans = spans_of(columns, screen.width());
    if (spans.size() != columns.size() || columns.back().width != 0) return;  // no COMMAND column at this width
    const std::string marker = "filter: " + ui.filter;
    const int command = spans.back().column;
    const int after_title = command + text_width(titles.back()) + 1;
    const int start = std::max(after_title, screen.width() - text_width(marker) - 1);
    if (start + text_width(marker) < screen.width()) {
        screen.put(row, start, marker, {Role::filter_marker, true});
    } else if (ui.sort != SortKey::command && spans.back().width >= 10) {  // a sorted COMMAND keeps its arrow
        screen.fill(row, command, spans.back().width, U' ', {Role::table_header});
        screen.put(row, command, fit(marker, spans.back().width), {Role::filter_marker, true});
    }
}

}  // namespace

int draw_table(Screen& screen, int row, int rows, const TopData& data, const UiState& ui, bool wide) {
    const bool focused = ui.focus == Focus::table;
    const auto columns = table_columns(data, wide, screen.width());
    std::vector<std::string> titles;
    // The sorted column's title carries the direction, where its width allows (htop's ▲/▼ habit).
    for (const Column& column : columns)
        titles.push_back(column.key == ui.sort && (column.width == 0 || text_width(column.title) < column.width)
                             ? column.title + (ui.sort_descending ? "↓" : "↑")
                             : column.title);
    screen.fill(row, 0, screen.width(), U' ', {Role::table_header});
    put_cells(screen, row, columns, titles, {Role::table_header}, ui.sort);
    // A right-aligned title as wide as its column (TPCS, SHARE, GPU%) takes its arrow in the space before it:
    // every sorted column says so, as htop's.
    const auto title_spans = spans_of(columns, screen.width());
    for (std::size_t i = 0; i < title_spans.size(); ++i)
        if (columns[i].key == ui.sort && titles[i] == columns[i].title && columns[i].right && title_spans[i].column > 4)
            screen.put(row, title_spans[i].column - 1, ui.sort_descending ? "↓" : "↑", {Role::sorted_header, true});
    put_filter_marker(screen, row, columns, titles, ui);
    // A click on a column's title sorts by it (again: the other way), as in htop; left of them, F6's menu.
    screen.hits.push_back({row, 0, 4, HitKind::key, static_cast<int>(KeyCode::f6)});
    const auto spans = spans_of(columns, screen.width());
    screen.table_columns.clear();
    for (std::size_t i = 0; i < spans.size(); ++i) {
        screen.table_columns.push_back(columns[i].key);
        screen.hits.push_back({row, spans[i].column, spans[i].width + 1, HitKind::sort_column, static_cast<int>(columns[i].key)});
    }
    const auto shown = visible_processes(data, ui);
    // Where not every process fits, the body's last line is the table's own "↑ N above · ↓ N more" line,
    // never written over a process's cells.
    const int lines = rows - 1;
    const bool all_fit = static_cast<int>(shown.size()) <= lines;
    const int body = all_fit ? lines : std::max(1, lines - 1);
    screen.table_rows = body;
    if (shown.empty()) {
        const std::string empty = data.processes.empty()
                                      ? "no partitioned process: start one with `gpupart run --tpcs EXPR -- CMD`, or `gpupart demo start`"
                                      : fmt::format("no process matches the filter '{}' (F4 changes it)", ui.filter);
        screen.put(row + 1, 4, fit(empty, screen.width() - 4), {Role::dim});
        return rows;
    }
    const TopProcess* selected = selected_process(data, ui);
    int selected_index = 0;
    for (std::size_t i = 0; i < shown.size(); ++i)
        if (shown[i] == selected) selected_index = static_cast<int>(i);
    // Scroll only as far as needed to keep the selected row in view.
    int first = std::clamp(ui.table_first_row, 0, std::max(0, static_cast<int>(shown.size()) - body));
    if (selected_index < first) first = selected_index;
    if (selected_index >= first + body) first = selected_index - body + 1;
    screen.table_first_row = first;
    for (int i = 0; i < body && first + i < static_cast<int>(shown.size()); ++i) {
        const TopProcess& p = *shown[static_cast<std::size_t>(first + i)];
        const int r = row + 1 + i;
        const bool is_selected = &p == selected && !ui.batch;  // no cursor in --batch frames
        const bool tagged = ui.tagged.count(p.pid) > 0;
        Style style{tagged ? Role::tagged : Role::normal, tagged};
        if (is_selected && focused) style = {Role::row_selected, tagged, false};
        if (is_selected && focused) screen.fill(r, 0, screen.width(), U' ', style);
        screen.put(r, 0, is_selected ? "▸" : " ", is_selected ? Style{style.role, true} : style);
        put_cells(screen, r, columns, row_cells(data, p, columns, screen.width()), is_selected && !focused ? Style{style.role, true, false, true} : style);
        // The selection never hides the process's own colour: its letter keeps the owner's
        // colours, and the cells either side of it keep the row's unselected look, so the letter stands out
        // even where the owner's colours are the selection bar's (owner1 is black on cyan, as the bar).
        const Style unselected{tagged ? Role::tagged : Role::normal, tagged};
        screen.put(r, 1, tagged ? "*" : " ", unselected);
        screen.put(r, 2, std::string(1, p.letter), {owner_role(p.colour), true});
        screen.put(r, 3, " ", unselected);
        screen.hits.push_back({r, 0, screen.width(), HitKind::process, p.pid});
    }
    const int drawn = std::min(body, static_cast<int>(shown.size()) - first);
    screen.hidden_rows += static_cast<int>(shown.size()) - drawn;
    if (!all_fit && lines >= 2) {
        const int below = static_cast<int>(shown.size()) - first - drawn;
        std::string more = first > 0 ? fmt::format("↑ {} above", first) : "";
        if (below > 0) more += fmt::format("{}↓ {} more", more.empty() ? "" : " · ", below);
        if (!ui.batch) more += " · PgUp PgDn Home End scroll · v hides the floorplan";
        screen.put(row + rows - 1, 4, fit(more, screen.width() - 4), {Role::dim});
    }
    return rows;
}

}  // namespace gpupart::top
