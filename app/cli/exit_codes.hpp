#pragma once
// gpupart's exit-code contract for scripts (README "Exit status", gpupart.1 EXIT STATUS). Kept small on
// purpose, as nvidia-smi and mig-parted do: a script tests for 0, and reads stderr or --json for why not.
namespace gpupart::cli {

inline constexpr int kExitOk = 0;
// Refused or failed (one line on stderr, nothing changed), and the "answer is no" of the checking
// commands: `check --fail-on` found such findings, `profile diff` found drift, `mps status` found MPS down.
inline constexpr int kExitRefused = 1;
inline constexpr int kExitUsage = 2;     // the command line itself is wrong (CLI11 parse errors, unknown --fields)
inline constexpr int kExitInternal = 3;  // a bug: an exception that is not a UserError

}  // namespace gpupart::cli
