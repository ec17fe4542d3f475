#pragma once
// Reading the MPS daemon's logs (control.log, server.log in $CUDA_MPS_LOG_DIRECTORY) for fatal errors,
// so that gpupart can say that the MPS server went down and which clients it took along, instead of
// leaving users to read the log (docs/mps-fault-domain.md has what the driver writes).
// NVIDIA documents no grammar for these logs: the patterns are the lines recorded on the H100 with
// driver 580 (tests/fixtures/mps-log/), and a line they do not know is ignored, never guessed at.
// The logs are written by a root daemon but hold text that clients chose (e.g. process names), so every
// string taken from them is made printable before it reaches a terminal.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpupart {

// One line: "[2026-11-23 16:40:01.123 Server  4428] message".
struct MpsLogLine {
    std::string time;     // as written: the machine's local time, to the millisecond
    std::string source;   // "Control", "Server", "Other", ...
    int pid = 0;          // the daemon or server that wrote it
    std::string message;  // printable (mps_printable)
};
std::optional<MpsLogLine> parse_mps_log_line(std::string_view line);

// A fatal error of an MPS server: when, which server, and the clients the log names as taken down.
struct MpsFatalError {
    std::string time;
    int server_pid = 0;
    std::vector<int> clients;        // every client process it tore down or left with a sticky error: sorted, distinct
    std::string what;                // the first fatal line's message (printable)
    std::vector<int> devices_reset;  // as the server numbers them
    int reported_client = 0;         // the client the first line names (not necessarily the one that faulted)
    std::vector<int> refused;        // clients refused while the server tore the others down: sorted, distinct
};

// The fatal errors of the server instances started since the control daemon last started (older ones
// belong to a daemon that is gone), oldest first. Both texts are whole lines, as read_mps_log_tail gives.
std::vector<MpsFatalError> find_mps_fatal_errors(std::string_view control_log, std::string_view server_log);

// $CUDA_MPS_LOG_DIRECTORY, else gpupart's default (`gpupart mps start` starts the daemon with it).
std::string mps_log_directory();

// The last `max_bytes` of a log file, cut at a line start; "" when it does not exist. The file is opened
// through safe_file (no FIFO, no device). Throws UserError when it cannot be read.
inline constexpr std::size_t kMpsLogTailBytes = 1u << 20;
std::string read_mps_log_tail(const std::string& path, std::size_t max_bytes = kMpsLogTailBytes);

// Both logs of `directory`, read and searched; without a server.log, control.log holds both (a daemon run
// with -f, its output appended there, as packaging/system/gpupart-mps@.service does).
std::vector<MpsFatalError> read_mps_fatal_errors(const std::string& directory);

// The errors of the servers running now (get_server_list). The control log's start line can be out of the
// tail read (every `get_server_list` adds five lines to it, and `top` asks once a second), and server.log
// keeps the lines of earlier daemons: the server pid is what ties an error to the server that runs.
std::vector<MpsFatalError> of_servers(std::vector<MpsFatalError> errors, const std::vector<int>& server_pids);

// `text` with every byte outside printable ASCII written as \xNN (\n \r \t by name): nothing in it can
// move a cursor or set a terminal's title.
std::string mps_printable(std::string_view text);

}  // namespace gpupart
