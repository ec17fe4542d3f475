#pragma once
// Where the user's measured curves live: the one place `gpupart measure`/`plan`, `gpupart top` and the
// GUI's Scaling panel agree on, so a curve the CLI saved is the curve the window shows.
#include <string>

namespace gpupart {

// $XDG_STATE_HOME/gpupart/curves when XDG_STATE_HOME is an absolute path (the XDG spec ignores a
// relative one), else $HOME/.local/state/gpupart/curves: per user, beside the history, because a curve
// describes the caller's own processes. Throws UserError when neither variable gives a directory.
std::string default_curve_directory();

}  // namespace gpupart
