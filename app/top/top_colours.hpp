#pragma once
// The colours of `gpupart top` by role, without curses (top_curses paints them; the tests read them).
// Letters and labels on a coloured background are never bold: xterm and tmux draw a bold black as grey
// ("bright black"), which on green or cyan cannot be read. Each coloured background gets the plain black
// or white that stands out on it instead.
#include "top/top_screen.hpp"

namespace gpupart::top {

// The eight ANSI colours (curses' COLOR_BLACK..COLOR_WHITE have the same numbers); -1: the terminal's own.
enum class Ansi : short { own = -1, black = 0, red = 1, green = 2, yellow = 3, blue = 4, magenta = 5, cyan = 6, white = 7 };

struct Look {
    Ansi foreground = Ansi::own;
    Ansi background = Ansi::own;
    bool bold = false;
    bool dim = false;
    bool reverse = false;
    bool underline = false;
};

// The role's colours alone (what the colour pair of the role is).
Look role_look(Role role);
// A cell as painted in colour: the role's look with the cell's own bold, reverse and underline, bold dropped
// wherever the background is a colour.
Look colour_cell_look(const Cell& cell);
// The foreground that reads best on `background`: black on green, cyan, yellow, white; white on the others.
Ansi contrast_on(Ansi background);

}  // namespace gpupart::top
