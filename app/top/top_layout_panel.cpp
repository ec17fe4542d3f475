// The findings section (under the table, or in the side panel), and the side panel that wide terminals
// get right of the floorplan: TPC share meters per process, the selected process in detail, findings.
#include <algorithm>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "top/top_layout_parts.hpp"

namespace gpupart::top {
namespace {

constexpr int kSeverityWidth = 8;  // "warning "
constexpr int kDetailLabel = 11;   // "requested  "
constexpr std::size_t kAppDetailLines = 4;  // the program's mask lines the panel shows; gpupart list shows them all

struct FindingLine {
    std::string label;  // the severity, on a finding's first line
    std::string text;
    Style label_style;
};

std::vector<FindingLine> finding_lines(const Finding& f, int width, bool wrapped) {
    const Style severity{severity_role(f.severity), true};
    const std::string label = fmt::format("{:<{}}", to_string(f.severity), kSeverityWidth);
    const std::string text = finding_text(f);
    if (!wrapped) return {{label, fit(text, width - kSeverityWidth), severity}};
    std::vector<FindingLine> lines;
    for (const std::string& part : wrap(text, width - kSeverityWidth)) lines.push_back({lines.empty() ? label : "", part, severity});
    return lines;
}

// Whole findings, wrapped, where the rows allow; else one clipped line each.
std::vector<FindingLine> findings_body(const TopData& data, int width, int rows) {
    std::vector<FindingLine> lines;
    for (const Finding& f : data.findings)
        for (auto& line : finding_lines(f, width, true)) lines.push_back(std::move(line));
    if (static_cast<int>(lines.size()) <= rows) return lines;
    lines.clear();
    for (const Finding& f : data.findings) lines.push_back(finding_lines(f, width, false).front());
    if (static_cast<int>(lines.size()) > rows) {
        lines.resize(static_cast<std::size_t>(std::max(rows - 1, 0)));
        lines.push_back({"", fmt::format("… {} more (f shows them all)", data.findings.size() - lines.size()), {Role::dim}});
    }
    return lines;
}

// The meters of the processes holding most TPCs, as many as `rows` allow (a title and the free line
// besides): with 33 processes the panel shows the biggest holders and how many more there are, and never
// grows past its rows into the table's.
int draw_share_meters(Screen& screen, int row, int column, int width, int rows, const TopData& data) {
    std::vector<const TopProcess*> order;
    for (const TopProcess& p : data.processes) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(),
                     [&](const TopProcess* a, const TopProcess* b) { return tpc_count(data, *a) > tpc_count(data, *b); });
    const int room = std::max(0, rows - 2);
    const bool all = static_cast<int>(order.size()) <= room;
    const int shown = all ? static_cast<int>(order.size()) : std::max(0, room - 1);  // a line says how many more
    screen.put(row, column, all ? std::string("TPC share") : fmt::format("TPC share · the {} biggest of {}", shown, order.size()),
               {Role::title});
    const int total = real_tpcs(data.gpu).count();
    const int bar = std::max(10, width - 24);
    const auto meter = [&](int r, const std::string& label, Style style, int count, const std::string& value) {
        screen.put(r, column, label, style);
        int c = screen.put(r, column + 10, "[", {Role::dim});
        const int filled = total > 0 ? (bar * count + total / 2) / total : 0;
        screen.fill(r, c, filled, U'|', style);
        screen.put(r, c + bar, "]", {Role::dim});
        screen.put(r, c + bar + 2, value, {Role::normal});
    };
    int r = row + 1;
    for (int i = 0; i < shown; ++i) {
        const TopProcess& p = *order[static_cast<std::size_t>(i)];
        const int count = tpc_count(data, p);
        meter(r++, fmt::format("{} {}", p.letter, p.pid), {owner_role(p.colour), true}, count,
              p.partitioned ? fmt::format("{}/{}", count, total) : "all");
    }
    if (!all) screen.put(r++, column, fmt::format("… {} more in the table", order.size() - static_cast<std::size_t>(shown)), {Role::dim});
    const int free = free_tpcs(data).count();
    meter(r++, "free", {Role::free_tpc}, free, fmt::format("{}/{}", free, total));
    return r - row;
}

std::vector<std::pair<std::string, std::string>> details(const TopData& data, const TopProcess& p) {
    const TpcMask mask = p.partitioned ? p.mask & real_tpcs(data.gpu) : real_tpcs(data.gpu);
    std::vector<std::string> whole;
    for (int gpc : gpcs_fully_covered(data.gpu, mask)) whole.push_back(gpc_name(gpc));
    const std::string rate = p.launches_per_second ? fmt::format(" · {:.1f}/s", *p.launches_per_second) : "";
    return {
        {"command", p.command},
        {"user", fmt::format("{} · control generation {}", p.user, p.generation)},
        {"requested", fmt::format("{} ({} TPCs, {} SMs)", tpcs_text(p), mask.count(), sm_count(data, p))},
        {"applied", p.applied},
        {"whole GPCs", whole.empty() ? "none" : fmt::format("{}", fmt::join(whole, " "))},
        {"shim", p.shim_detail},
        {"launches", fmt::format("{}{}", p.launches, rate)},
    };
}

// The masks the program chose itself, under the operator's (requested): each choice → what it runs on.
struct AppDetail {
    std::string label;
    std::string value;
    bool outside_bound = false;
};
std::vector<AppDetail> app_details(const TopProcess& p) {
    std::vector<AppDetail> lines;
    if (!p.app_masks) return lines;
    lines.push_back({"program", p.app_summary});
    for (std::size_t i = 0; i < p.app_lines.size() && i < kAppDetailLines; ++i)
        lines.push_back({"", p.app_lines[i].text, p.app_lines[i].outside_bound});
    if (p.app_lines.size() > kAppDetailLines)
        lines.push_back({"", fmt::format("… {} more (gpupart list)", p.app_lines.size() - kAppDetailLines)});
    return lines;
}

int detail_rows(const TopData& data, const TopProcess& p) { return static_cast<int>(details(data, p).size() + app_details(p).size()); }

}  // namespace

Role severity_role(Severity severity) {
    return severity == Severity::error ? Role::finding_error : severity == Severity::warning ? Role::finding_warning : Role::finding_info;
}

std::string finding_text(const Finding& f) { return f.message + " [" + (f.id.empty() ? f.rule : f.id + "; " + f.rule) + "]"; }

int findings_rows_wanted(const TopData& data, int width) {
    int lines = 0;
    for (const Finding& f : data.findings) lines += static_cast<int>(finding_lines(f, width, true).size());
    return 1 + std::max(lines, 1);
}

void draw_findings(Screen& screen, int row, int column, int width, int rows, const TopData& data, bool hints) {
    const int c = screen.put(row, column, fmt::format("Findings ({})", data.findings.size()), {Role::title});
    // f opens every finding whole: at 80 columns the lines here are cut.
    if (hints) screen.put(row, c, fit(" · f reads them whole · the controller's rules about the partitions as they are (gpupart check)",
                           column + width - c), {Role::dim});
    if (data.findings.empty()) {
        screen.put(row + 1, column, "no finding: nothing to warn about", {Role::good});
        return;
    }
    const auto lines = findings_body(data, width, rows - 1);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const int r = row + 1 + static_cast<int>(i);
        screen.put(r, column, lines[i].label, lines[i].label_style);
        screen.put(r, column + kSeverityWidth, lines[i].text, {lines[i].text.starts_with("…") ? Role::dim : Role::normal},
                   width - kSeverityWidth);
    }
}

int side_panel_rows(const TopData& data) {
    const int meters = 2 + static_cast<int>(data.processes.size());
    int selected = 0;  // the tallest process's details, so the panel does not jump when the selection moves
    for (const TopProcess& p : data.processes) selected = std::max(selected, 1 + detail_rows(data, p));
    return meters + 1 + selected;
}

void draw_side_panel(Screen& screen, int row, int column, int width, int rows, const TopData& data, const UiState& ui) {
    const int end = row + rows;
    // The meters leave the selected process's lines where the panel has them to spare.
    int selected_rows = 0;
    if (const TopProcess* p = selected_process(data, ui)) selected_rows = 2 + detail_rows(data, *p);
    const int spare = rows - selected_rows - 1;  // a blank line between them
    const int meter_rows = spare >= 2 + std::min<int>(4, static_cast<int>(data.processes.size())) ? spare : rows;
    int r = row + draw_share_meters(screen, row, column, width, meter_rows, data) + 1;
    if (const TopProcess* p = selected_process(data, ui); p && r + 1 + detail_rows(data, *p) <= end) {
        int c = screen.put(r, column, "Selected ", {Role::title});
        c = screen.put(r, c, std::string(1, p->letter), {owner_role(p->colour), true});
        screen.put(r, c, fmt::format(" {}", p->pid), {Role::value, true});
        ++r;
        for (const auto& [label, value] : details(data, *p)) {
            screen.put(r, column, label, {Role::label});
            screen.put(r, column + kDetailLabel, fit(value, width - kDetailLabel), {Role::normal});
            ++r;
        }
        for (const AppDetail& line : app_details(*p)) {  // a choice outside the operator's mask in red
            screen.put(r, column, line.label, {Role::label});
            screen.put(r, column + kDetailLabel, fit(line.value, width - kDetailLabel), {line.outside_bound ? Role::bad : Role::normal});
            ++r;
        }
    }
}

}  // namespace gpupart::top
