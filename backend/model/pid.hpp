#pragma once
// The one strict reading of a process id, for every command and front end (set, top, the GUI, undo's
// journal targets, demo stop). Lenient readers took " 123", "+123", "0x4a02" (= 18946) and "123abc", so
// a typo or a hostile slot could name another process; a pid of 0 or -1 to kill() is a process group
// or every process.
#include <optional>
#include <string>
#include <string_view>

namespace gpupart {

// Linux's PID_MAX_LIMIT on 64-bit: no process id is ever larger (kernel/pid_max may be set lower).
inline constexpr long long kPidMax = 4194304;

// Decimal digits only, no sign, space or leading zero, 1..kPidMax. Throws UserError (one line, the text
// quoted escaped) otherwise.
int parse_pid(std::string_view text);

// Why `pid` (already a number: from a slot, the journal, a table row) cannot name a process; nullopt
// when it can.
std::optional<std::string> pid_problem(long long pid);

}  // namespace gpupart
