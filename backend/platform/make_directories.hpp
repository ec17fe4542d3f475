#pragma once
// Creating a directory and its missing parents, for the stores gpupart writes in the user's or the
// system's directories (profiles, scaling curves, top's settings). One place, so that each store says the
// same about what went wrong.
#include <string>

#include <sys/types.h>

namespace gpupart {

// Creates `dir` and every missing parent with `mode` (an existing one is left as it is), and checks that
// `dir` is then a directory. Throws UserError "<what> <dir>: cannot create <prefix>: <why>" or
// "<what> <dir>: not a directory", e.g. what = "scaling curves".
void make_directories(const std::string& dir, mode_t mode, const std::string& what);

}  // namespace gpupart
