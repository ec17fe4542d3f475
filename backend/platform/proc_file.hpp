#pragma once
// Reading small kernel-made files (/proc/PID/cmdline, /proc/PID/comm, sysfs attributes) when the
// thing they describe may vanish between open and read. A process that exits after its cmdline was
// opened makes read() fail with ESRCH, and libstdc++'s filebuf turns a failed read into an exception
// that istreambuf_iterator passes on: `gpupart top` once died of it ("basic_filebuf::underflow error
// reading the file: No such process") when a process it listed exited mid-refresh.
#include <optional>
#include <string>

namespace gpupart {

// The whole file, or nullopt when it cannot be opened or read (gone, no permission, a directory).
// Reads at most `limit` bytes; /proc files carry no size, so it reads until end of file.
std::optional<std::string> read_proc_file(const std::string& path, std::size_t limit = 1 << 20);

// Its first line without the newline, or "" when it cannot be read.
std::string read_first_line(const std::string& path);

}  // namespace gpupart
