#pragma once
// The layout of `gpupart top`: a pure function from the frame's data, the user's choices and the
// terminal's size to a screen of cells. No terminal, no I/O: the GoogleTests call it at 80x24,
// 120x40 and 200x60 and read the result as text.
#include "top/top_data.hpp"
#include "top/top_screen.hpp"
#include "top/top_ui_state.hpp"

namespace gpupart::top {

inline constexpr int kMinWidth = 60;
inline constexpr int kMinHeight = 16;

// How the floorplan is drawn: compact (two GPC columns, a letter per TPC), wide (one GPC per line,
// each TPC with its mask bit), or tall (wide plus a line of SM ids under each GPC). The most detailed
// one that leaves the table and the findings enough rows wins.
enum class FloorplanMode { compact, wide, tall };
FloorplanMode floorplan_mode(const TopData& data, const UiState& ui, int width, int height);

Screen layout_top(const TopData& data, const UiState& ui, int width, int height);

}  // namespace gpupart::top
