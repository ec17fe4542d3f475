// The frame from top to bottom: header, floorplan, process table, findings, status line, footer of keys.
// Heights are shared out so the table and the findings both stay visible on an 80x24 terminal.
#include "top/top_layout.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "top/top_key.hpp"
#include "top/top_layout_parts.hpp"

namespace gpupart::top {
namespace {

constexpr int kSidePanelWidth = 56;

// ---- header ---------------------------------------------------------------------------------------

int count_simulated(const TopData& data) {
    return static_cast<int>(std::count_if(data.processes.begin(), data.processes.end(), [](const TopProcess& p) { return p.simulated; }));
}

std::string processes_text(const TopData& data) {
    const auto count = data.processes.size();
    const int simulated = count_simulated(data);
    if (simulated == 0) return fmt::format("{} process{}", count, count == 1 ? "" : "es");
    if (simulated == static_cast<int>(count)) return fmt::format("{} simulated process{} (demo)", count, count == 1 ? "" : "es");
    return fmt::format("{} processes, {} simulated (demo)", count, simulated);
}

int header_rows(const TopData& data) {
    return 2 + (data.meters ? 1 : 0) + (data.source.why.empty() ? 0 : 1) + (data.source.read_only.empty() ? 0 : 1) + (data.registry_problem.empty() ? 0 : 1) +
           (data.unreadable_slots == 0 ? 0 : 1);
}

int draw_header(Screen& screen, const TopData& data, const UiState& ui, bool wide) {
    const Gpu& gpu = data.gpu;
    // The clock keeps its place at the right; what comes before it shrinks to fit a space short of it:
    // the architecture goes first, then the title, then the GPU's name is cut with "…".
    const int clock_column = screen.width() - static_cast<int>(data.clock.size());
    const int room = clock_column - 1;
    const std::string which = data.source.gpu_count > 1 ? fmt::format("GPU {} of {}: ", gpu.index, data.source.gpu_count)
                                                        : fmt::format("GPU {}: ", gpu.index);
    const std::string name = gpu_display_name(gpu);
    const std::string architecture = gpu.architecture.known() ? " " + *gpu.architecture.value : "";
    int c = 0;
    if (text_width("gpupart top · " + which + name + architecture) <= room) {
        c = screen.put(0, 0, "gpupart top", {Role::title, true});
        c = screen.put(0, c, " · " + which, {Role::normal});
        c = screen.put(0, c, name, {Role::value, true});
        c = screen.put(0, c, architecture, {Role::normal});
    } else if (text_width("gpupart top · " + which + name) <= room) {
        c = screen.put(0, 0, "gpupart top", {Role::title, true});
        c = screen.put(0, c, " · " + which, {Role::normal});
        c = screen.put(0, c, name, {Role::value, true});
    } else {
        c = screen.put(0, 0, fit(which, room), {Role::normal});
        c = screen.put(0, c, fit(name, room - c), {Role::value, true});
    }
    const auto put_before_clock = [&](const std::string& text, Style style) {
        const int left = room - c;
        if (left >= 6) c = screen.put(0, c, fit(text, left), style);  // " · ab…" at least, never a lone " ·…"
    };
    if (gpu.uuid.known())
        put_before_clock(" · " + *gpu.uuid.value, {Role::dim});
    else
        put_before_clock(" · recording " + data.source.origin, {Role::label});
    if (wide) {
        if (gpu.driver_version.known()) put_before_clock(" · driver " + *gpu.driver_version.value, {Role::dim});
        if (gpu.pci_bus_id.known()) put_before_clock(" · PCI " + *gpu.pci_bus_id.value, {Role::dim});
    }
    screen.put(0, clock_column, data.clock, {Role::dim});

    // The second line: parts in order of importance, each only if it fits whole.
    const TpcMask real = real_tpcs(gpu);
    const int free = free_tpcs(data).count();
    c = screen.put(1, 0, "MPS ", {Role::normal});
    c = screen.put(1, c, data.mps_running ? "running" : "off", {data.mps_running ? Role::good : Role::bad, true});
    c = screen.put(1, c, " · TPCs ", {Role::normal});
    c = screen.put(1, c, std::to_string(real.count() - free), {Role::value, true});
    c = screen.put(1, c, " owned, ", {Role::normal});
    c = screen.put(1, c, std::to_string(free), {Role::value, true});
    c = screen.put(1, c, fmt::format(" free of {}", real.count()), {Role::normal});
    const auto part = [&](const std::string& text, Role role) {
        if (c + text_width(text) <= screen.width()) c = screen.put(1, c, text, {role});
    };
    if (wide) part(fmt::format(" ({} SMs)", sm_total(gpu)), Role::normal);
    part(" · " + processes_text(data), Role::normal);
    if (const int components = smlp_component_count(data); components > 0)
        part(fmt::format(" · {} SMLP component{} (x)", components, components == 1 ? "" : "s"), Role::normal);
    part(fmt::format(" · every {:.1f} s", ui.settings.delay_tenths / 10.0), Role::dim);
    if (wide) part(" · registry " + data.registry_dir, Role::dim);

    if (!data.meters && !data.meters_problem.empty()) part(" · " + data.meters_problem, Role::dim);

    int row = 2;
    if (data.meters) {  // NVML's meters, most important first, each part whole or not at all (any width)
        int m = screen.put(row, 0, "", {Role::normal});
        bool first = true;
        for (const std::string& text : meter_parts(*data.meters)) {
            const std::string piece = (first ? "" : " · ") + text;
            if (m + text_width(piece) > screen.width()) break;
            m = screen.put(row, m, piece, {first ? Role::value : Role::normal, first});
            first = false;
        }
        // Some drivers charge MPS clients' memory to the server (seen on older drivers; 580 lists the clients):
        // said only when a process has no figure while MPS runs.
        const bool unattributed = std::any_of(data.processes.begin(), data.processes.end(),
                                              [](const TopProcess& p) { return !p.memory_bytes && !p.simulated; });
        const bool no_gpu_time = std::any_of(data.processes.begin(), data.processes.end(),
                                             [](const TopProcess& p) { return !p.gpu_percent && !p.simulated; });
        if (data.mps_running && (unattributed || no_gpu_time)) {
            const std::string note = unattributed ? " · MPS: a client without MEM is counted in the server's"
                                                  : " · MPS: NVML gives GPU% to the server; LAUNCH/s is each client's";
            if (m + text_width(note) <= screen.width()) screen.put(row, m, note, {Role::dim});
        }
        ++row;
    }
    if (!data.source.read_only.empty()) screen.put(row++, 0, fit("view only: " + data.source.read_only, screen.width()), {Role::bad, true});
    if (!data.source.why.empty()) screen.put(row++, 0, fit(data.source.why, screen.width()), {Role::label});
    // Lines of their own, at any width: a registry that is gone or a slot that cannot be read is never
    // shown as fewer processes without a word.
    if (!data.registry_problem.empty()) screen.put(row++, 0, fit(data.registry_problem, screen.width()), {Role::bad, true});
    if (data.unreadable_slots > 0)
        screen.put(row++, 0, fit(fmt::format("{} unreadable slot{} (their TPCs are unknown); {}", data.unreadable_slots,
                                             data.unreadable_slots == 1 ? "" : "s", data.unreadable_problem), screen.width()),
                   {Role::bad, true});
    return row;
}

// ---- status line, footer ---------------------------------------------------------------------------

std::string status_context(const TopData& data, const UiState& ui) {
    if (ui.focus == Focus::floorplan) {
        const int bit = cursor_bit(data, ui);
        if (bit < 0) return "no TPC on this map";
        const Tpc* tpc = find_tpc(data.gpu, bit);
        const Ownership owners = ownership(data);
        const auto& holders = owners[static_cast<std::size_t>(bit)];
        std::string who = holders.empty() ? "free" : "";
        for (int index : holders) {
            const TopProcess& p = data.processes[static_cast<std::size_t>(index)];
            who += fmt::format("{}{} {}", who.empty() ? "" : ", ", p.letter, p.pid);
        }
        std::string text = fmt::format("TPC {} {} SMs {}: {}", bit, tpc && tpc->gpc ? gpc_name(*tpc->gpc) : "(no GPC)",
                                       tpc ? fmt::format("{}", fmt::join(tpc->sms, ",")) : "?", who);
        const TpcMask marked = ui.marked & real_tpcs(data.gpu);
        text += smlp_holders_at(data, bit);
        if (!marked.empty()) text += fmt::format(" · marked {}", marked.to_list());
        if (const TopProcess* target = selected_process(data, ui))
            text += fmt::format(" · Enter gives {} to {} {}", marked.empty() ? "it" : "them", target->letter, target->pid);
        if (marked.empty()) text += " · Space marks, g its GPC";
        return text;
    }
    const TopProcess* p = selected_process(data, ui);
    if (!p) return "Tab: floorplan · F1: help";
    // The program's own masks before the TPCs: a partition of whole GPCs is a long list of TPC numbers (they
    // are strided over the GPCs), and where there is no side panel this line is the only place that says them.
    return fmt::format("{} {}{} · TPCs {} · applied {} · shim: {} · Tab: floorplan, mark TPCs and give them to it", p->letter, p->pid,
                       p->app_masks ? " · program: " + p->app_summary : "", tpcs_text(*p), p->applied, p->shim_detail);
}

void draw_status(Screen& screen, int row, const TopData& data, const UiState& ui) {
    if (ui.dialog == Dialog::search || ui.dialog == Dialog::filter) {
        int c = screen.put(row, 0, ui.dialog == Dialog::search ? "Search: " : "Filter: ", {Role::label, true});
        c = screen.put(row, c, ui.input, {Role::input});
        c = screen.put(row, c, "_", {Role::input, false, true});
        screen.put(row, c + 2, "Enter keeps · Esc cancels", {Role::dim});
        return;
    }
    if (!ui.message.empty()) {
        screen.put(row, 0, fit(ui.message, screen.width()), {ui.message_is_error ? Role::message_error : Role::message_ok, true});
        return;
    }
    screen.put(row, 0, fit(status_context(data, ui), screen.width()), {Role::dim});
}

void draw_footer(Screen& screen, int row, const UiState& ui) {
    struct Item {
        const char* key;
        const char* label;
        KeyCode code;
    };
    const bool table = ui.focus == Focus::table;
    const bool filtered = !ui.filter.empty();  // as htop: F4 reads FILTER, highlighted, while a filter hides processes
    const Item items[] = {{"F1", "Help", KeyCode::f1},     {"F2", "Setup", KeyCode::f2},   {"F3", "Search", KeyCode::f3},
                          {"F4", filtered ? "FILTER" : "Filter", KeyCode::f4},   {"F6", "SortBy", KeyCode::f6},
                          {"F7", "TPC+", KeyCode::f7},     {"F8", "TPC-", KeyCode::f8},    {"F9", "Action", KeyCode::f9},
                          {"F10", "Quit", KeyCode::f10},   {"Tab", "Focus", KeyCode::tab}, {"u", "Undo", KeyCode::none},
                          {"Spc", table ? "Tag" : "Mark", KeyCode::none}, {"Enter", table ? "Menu" : "Give", KeyCode::enter},
                          {"PMT", "Sort", KeyCode::none},  {"v", "Floorplan", KeyCode::none},  {"^L", "Redraw", KeyCode::none},
                          {"F5", "Flat", KeyCode::f5}};
    int c = 0;
    for (const Item& item : items) {
        const std::string label = std::string(item.label) + " ";
        if (c + text_width(item.key) + text_width(label) > screen.width()) break;
        const int start = c;
        c = screen.put(row, c, item.key, {Role::footer_key, true});
        c = screen.put(row, c, label, {filtered && item.code == KeyCode::f4 ? Role::filter_marker : Role::footer_label});
        if (item.code != KeyCode::none) screen.hits.push_back({row, start, c - start, HitKind::key, static_cast<int>(item.code)});
    }
}

// The rows every section wants: what decides between the floorplan's forms and shares out the rest.
struct Wants {
    int header = 0;
    int table = 0;            // header row and every visible process
    int table_least = 0;      // header row and up to 10 processes
    int findings = 0;         // title and every finding, wrapped
    int findings_least = 0;   // title and up to 3 findings
};

Wants wants(const TopData& data, const UiState& ui, int width) {
    Wants w;
    w.header = header_rows(data);
    const int shown = std::max<int>(1, static_cast<int>(visible_processes(data, ui).size()));
    w.table = 1 + shown;
    w.table_least = 1 + std::min(shown, 10);  // the floorplan's TPC numbers only where 10 processes still show
    if (ui.settings.show_findings) {
        w.findings = findings_rows_wanted(data, width - 2);
        w.findings_least = 1 + std::min(std::max<int>(1, static_cast<int>(data.findings.size())), 3);
    }
    return w;
}

}  // namespace

FloorplanMode floorplan_mode(const TopData& data, const UiState& ui, int width, int height) {
    const Wants w = wants(data, ui, width);
    // The process table is the point of a top: the SM ids' second line only where every process still shows,
    // the TPC numbers where at least a few do; else the compact form.
    const auto fits = [&](FloorplanMode mode, int table) {
        return floorplan_width(data, mode, width) - 22 <= width &&  // the GPC summaries may be cut
               w.header + floorplan_height(data, mode, width) + table + w.findings_least + 2 <= height;
    };
    if (ui.settings.show_sm_ids && width >= 100 && fits(FloorplanMode::tall, w.table)) return FloorplanMode::tall;
    if (fits(FloorplanMode::wide, w.table_least)) return FloorplanMode::wide;
    return FloorplanMode::compact;
}

namespace {

Screen layout_at(const TopData& data, const UiState& ui, int width, int height) {
    Screen screen(width, height, ui.settings.ascii);
    if (width < kMinWidth || height < kMinHeight) {
        screen.put(0, 0, fmt::format("gpupart top needs {}x{} at least", kMinWidth, kMinHeight), {Role::bad, true});
        screen.put(1, 0, fmt::format("(this terminal is {}x{}); q quits", width, height), {Role::normal});
        return screen;
    }
    const bool wide = width >= 120;
    const bool show_floorplan = ui.settings.show_floorplan;
    const FloorplanMode mode = floorplan_mode(data, ui, width, height);
    const Wants w = wants(data, ui, width);
    const int floorplan = show_floorplan ? floorplan_height(data, mode, width) : 0;
    // Wide terminals get a side panel right of the floorplan (the TPC share of the biggest holders, the
    // selected process), taller than the floorplan only with rows the table does not need: it never takes
    // a process row. The findings stay under the table, where every width shows them.
    const int panel_left = floorplan_width(data, mode, width) + 2;
    const bool side = show_floorplan && mode != FloorplanMode::compact && width - panel_left >= kSidePanelWidth;
    int section = side ? std::max(floorplan, std::min(side_panel_rows(data),
                                                      height - w.header - w.table - w.findings_least - 2))
                       : floorplan;
    // A small terminal (60x16 with the meters row) keeps the table's header and one process row: the
    // floorplan gives up its last rows and says so, rather than hiding every process.
    const int floorplan_room = height - w.header - 2 - 2;
    const bool floorplan_cut = show_floorplan && !side && section > floorplan_room && floorplan_room >= 3;
    if (floorplan_cut) section = floorplan_room;
    // Blank lines between the sections where everything fits with room to spare.
    const bool airy = w.header + section + w.table + w.findings + 2 + 3 <= height;
    int row = draw_header(screen, data, ui, wide) + (airy ? 1 : 0);
    if (show_floorplan) {
        draw_floorplan(screen, row, data, ui, mode, side ? panel_left - 1 : width);
        if (floorplan_cut) {
            const int last = row + section - 1;
            screen.fill(last, 0, width, U' ', {Role::normal});
            screen.put(last, 0, fit(fmt::format("  … {} more floorplan rows: a taller terminal shows them (v hides it)", floorplan - section + 1), width),
                       {Role::dim});
        }
        if (side) draw_side_panel(screen, row, panel_left, width - panel_left, section, data, ui);
        row += section + (airy ? 1 : 0);
    }

    // The table and the findings share what is left above the status line and the footer; the findings
    // sit right above the status line, so they stay put while processes come and go.
    const int chrome = ui.batch ? 0 : 2;  // the status line and the keys: not in --batch frames
    const int rest = height - row - chrome - (airy ? 1 : 0);
    int findings_rows = std::min(w.findings, std::max(std::min(w.findings, w.findings_least), rest - w.table));
    int table_rows = rest - findings_rows;
    if (table_rows < 2) {
        table_rows = std::min(rest, 2);
        findings_rows = std::max(0, rest - table_rows);
    }
    if (findings_rows == 1) {  // a title with no line is worth nothing: the table takes it
        ++table_rows;
        findings_rows = 0;
    }
    row += draw_table(screen, row, table_rows, data, ui, wide);
    if (findings_rows > 0) draw_findings(screen, row + (airy ? 1 : 0), 2, width - 2, findings_rows, data, !ui.batch);
    if (ui.settings.show_findings) screen.hidden_rows += std::max(0, w.findings - findings_rows);
    if (floorplan_cut) screen.hidden_rows += floorplan - section;
    if (!ui.batch) {
        draw_status(screen, height - 2, data, ui);
        draw_footer(screen, height - 1, ui);
    }
    draw_dialog(screen, data, ui);
    return screen;
}

}  // namespace

Screen layout_top(const TopData& data, const UiState& ui, int width, int height) {
    if (!ui.batch) return layout_at(data, ui, width, height);
    // --batch, as top -b: every process and every finding, whatever the size asked for; the frame grows
    // by the rows it had no room for (a few rounds: a taller frame may choose another floorplan form).
    Screen screen = layout_at(data, ui, width, height);
    for (int round = 0; round < 4 && screen.hidden_rows > 0; ++round) {
        height += screen.hidden_rows;
        screen = layout_at(data, ui, width, height);
    }
    return screen;
}

}  // namespace gpupart::top
