// The findings view (f): every finding whole, wrapped to the terminal's width and scrolled, where the
// findings panel gives each one line cut at 80 columns. Esc closes it (top_input_dialogs).
#include <algorithm>

#include <fmt/format.h>

#include "top/top_layout_parts.hpp"

namespace gpupart::top {
namespace {

constexpr int kIndent = 2;  // a finding's lines after its first, under its text

std::vector<std::pair<std::string, Style>> findings_view_lines(const TopData& data, int width) {
    std::vector<std::pair<std::string, Style>> lines;
    if (data.findings.empty()) {
        lines.push_back({"no finding: nothing to warn about", {Role::good}});
        return lines;
    }
    for (std::size_t i = 0; i < data.findings.size(); ++i) {
        const Finding& f = data.findings[i];
        if (i > 0) lines.push_back({"", {}});
        const auto head = fmt::format("{}. {}: ", i + 1, to_string(f.severity));
        // Wrapped to the width less the indent of the lines after the first, so that none is cut.
        const auto wrapped = wrap(head + finding_text(f), width - kIndent);
        for (std::size_t k = 0; k < wrapped.size(); ++k)
            lines.push_back({k == 0 ? wrapped[k] : std::string(kIndent, ' ') + wrapped[k],
                             k == 0 ? Style{severity_role(f.severity), true} : Style{Role::normal}});
    }
    return lines;
}

}  // namespace

void draw_findings_view(Screen& screen, const TopData& data, const UiState& ui) {
    const int width = screen.width();
    const int height = screen.height();
    const int inner = width - 4;
    const auto lines = findings_view_lines(data, inner);
    const int rows = std::max(1, height - 3);  // inside the box, less its last line: the keys
    const int total = static_cast<int>(lines.size());
    const int first = std::clamp(ui.findings_first_line, 0, std::max(0, total - rows));
    screen.findings_lines = total;
    screen.findings_rows = rows;
    screen.findings_first_line = first;
    screen.hits.clear();  // clicks go to the view only (none does anything there)
    draw_box(screen, 0, 0, height, width, fmt::format("Findings ({}) · gpupart check lists the same", data.findings.size()));
    for (int i = 0; i < rows && first + i < total; ++i) {
        const auto& [text, style] = lines[static_cast<std::size_t>(first + i)];
        screen.put(1 + i, 2, text, style, inner);
    }
    const std::string where = total > rows ? fmt::format("lines {}-{} of {} · ", first + 1, std::min(total, first + rows), total) : "";
    screen.put(height - 2, 2, fit(where + "↑ ↓ PgUp PgDn Home End scroll · Esc closes", inner), {Role::dim});
}

}  // namespace gpupart::top
