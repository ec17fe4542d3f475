#pragma once
// Questions the layout and the key handler both ask of a frame: which processes the table shows and in
// what order, how the floorplan's rows and slots are arranged, who holds each TPC, and which actions
// the F9 menu offers. Pure functions of TopData and UiState.
#include <array>
#include <string>
#include <vector>

#include "top/top_data.hpp"
#include "top/top_ui_state.hpp"

namespace gpupart::top {

// The table's processes: those matching the filter, in the chosen order.
std::vector<const TopProcess*> visible_processes(const TopData& data, const UiState& ui);
// What the sort menu offers and < > cycle through: the columns the table shows (`shown`, from the last frame;
// every key when empty), and the sorted one even where the width hides it.
std::vector<SortKey> sort_choices(const UiState& ui, const std::vector<SortKey>& shown);
// Case-insensitive match of pid, user or command against `text` (what search and filter use).
bool process_matches(const TopProcess& process, const std::string& text);
const TopProcess* find_process(const TopData& data, int pid);
// The selected process: ui.selected_pid if the table shows it, else the table's first row (or null).
const TopProcess* selected_process(const TopData& data, const UiState& ui);

// Where the selection goes when the table's processes change: `selected` if `now` still shows it, else its
// nearest neighbour by position in the order the table showed before (the one below first, as htop's cursor
// keeps its line, then the one above), never simply the first row; 0 when none of them is shown.
int selection_after(const std::vector<int>& before, int selected, const std::vector<int>& now);

// One floorplan row: a GPC, or the TPCs whose GPC is not known.
struct FloorRow {
    std::string label;        // "gpc3" or "no GPC"
    int gpc = -1;             // index into Gpu::gpcs; -1 for the TPCs of no known GPC
    std::vector<int> slots;   // the mask bit of the TPC in each slot; -1 = a hole (no TPC)
    int tpcs = 0;
    int sms = 0;
};
std::vector<FloorRow> floor_rows(const Gpu& gpu);

// For every mask bit, the indices (into TopData::processes) of the partitioned processes holding it.
using Ownership = std::array<std::vector<int>, TpcMask::kWidth>;
Ownership ownership(const TopData& data);
TpcMask free_tpcs(const TopData& data);  // real TPCs no partitioned process holds

// The TPCs a "give" acts on: the marked ones, else the TPC under the cursor.
TpcMask give_selection(const TopData& data, const UiState& ui);
// The floorplan cursor, valid for this GPU: ui.cursor_bit if it is a real TPC, else the first one (-1: none).
int cursor_bit(const TopData& data, const UiState& ui);

// The processes + and - act on: the tagged ones shown, else the selected one.
std::vector<int> target_pids(const TopData& data, const UiState& ui);
// The same processes as the controller takes them: pid and start time (a pid reused meanwhile is refused).
std::vector<ProcessRef> target_processes(const TopData& data, const UiState& ui);

// The F9 menu.
enum class MenuAction { give_marked, give_gpc, release, grow, shrink, undo, clear_marks, untag };
struct MenuItem {
    MenuAction action;
    std::string label;
    bool enabled = true;
};
std::vector<MenuItem> action_menu(const TopData& data, const UiState& ui);

// "9-16" / "all" / "(none)": a process's TPCs as the table and dialogs say them.
std::string tpcs_text(const TopProcess& process);
int tpc_count(const TopData& data, const TopProcess& process);
int sm_count(const TopData& data, const TopProcess& process);

}  // namespace gpupart::top
