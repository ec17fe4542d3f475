#pragma once
// The sections of the layout, one file each (private to app/top): every function draws one section at
// a given row of the screen and returns how many rows it used.
#include <string>
#include <vector>

#include "top/top_layout.hpp"
#include "top/top_view.hpp"

namespace gpupart::top {

int floorplan_height(const TopData& data, FloorplanMode mode, int width);
int floorplan_width(const TopData& data, FloorplanMode mode, int width);  // its columns, GPC summaries included
// `width`: the columns it may use (left of the side panel, where there is one).
int draw_floorplan(Screen& screen, int row, const TopData& data, const UiState& ui, FloorplanMode mode, int width);

int draw_table(Screen& screen, int row, int rows, const TopData& data, const UiState& ui, bool wide);

// The findings: a title, then every finding wrapped where `rows` allow, else one clipped line each.
int findings_rows_wanted(const TopData& data, int width);
// `hints`: the title says that f reads them whole (not in --batch frames, which have no keys).
void draw_findings(Screen& screen, int row, int column, int width, int rows, const TopData& data, bool hints = true);

Role severity_role(Severity severity);
std::string finding_text(const Finding& finding);  // its message and "[id; reference]", as the CLI says it

// The findings view (f): every finding whole, wrapped to the width, scrolled by ui.findings_first_line.
void draw_findings_view(Screen& screen, const TopData& data, const UiState& ui);

// The SMLP components view (x): every component, a strip of who holds which of its TPCs, its queues.
void draw_smlp_view(Screen& screen, const TopData& data, const UiState& ui);
int smlp_component_count(const TopData& data);
// What SMLP components of this GPU say about TPC `bit`: " · SMLP cam: held by 1234 (track)"; "" when none has it.
std::string smlp_holders_at(const TopData& data, int bit);

// Right of the floorplan on wide terminals: TPC share meters of the biggest holders, the selected process.
int side_panel_rows(const TopData& data);
void draw_side_panel(Screen& screen, int row, int column, int width, int rows, const TopData& data, const UiState& ui);

// Dialogs are drawn last, over the sections; they replace the click regions of what they cover.
void draw_dialog(Screen& screen, const TopData& data, const UiState& ui);

// Helpers the sections share.
std::string fit(const std::string& text, int width);  // clipped with "…" when longer than `width`
std::vector<std::string> wrap(const std::string& text, int width);  // word wrap into lines of at most `width`
void draw_box(Screen& screen, int top, int left, int height, int width, const std::string& title);

}  // namespace gpupart::top
