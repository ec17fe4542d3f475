#pragma once
// The interactive `gpupart top`: the one part that talks to the terminal (through ncursesw). It paints
// the session's frames, turns curses keys and clicks into top::Key, follows the terminal's size, and
// gives the terminal back as it found it on exit, on an error and on SIGINT, SIGTERM and SIGHUP.
#include "top/top_session.hpp"

namespace gpupart::top {

// Runs until the user quits or a signal arrives; returns the exit code (128 + signal after a signal).
int run_interactive(TopSession& session);

}  // namespace gpupart::top
