#include "platform/mps_log.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/safe_file.hpp"

namespace gpupart {

std::string mps_printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        // Above 0x7e too: in UTF-8, C1 controls such as CSI (0xc2 0x9b) act like ESC [ on some terminals.
        else if (byte < 0x20 || byte > 0x7e) out += fmt::format("\\x{:02x}", byte);
        else out += c;
    }
    return out;
}

std::optional<MpsLogLine> parse_mps_log_line(std::string_view line) {
    // "[YYYY-MM-DD HH:MM:SS.mmm <source words> <pid>] <message>"; the pid is right-aligned with spaces.
    if (line.size() < 26 || line[0] != '[') return std::nullopt;
    const auto close = line.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view head = line.substr(1, close - 1);
    if (head.size() < 25 || head[4] != '-' || head[7] != '-' || head[10] != ' ' || head[13] != ':' ||
        head[16] != ':' || head[19] != '.')
        return std::nullopt;
    const std::string_view time = head.substr(0, 23);
    for (std::size_t i = 0; i < time.size(); ++i)
        if (i != 4 && i != 7 && i != 10 && i != 13 && i != 16 && i != 19 && (time[i] < '0' || time[i] > '9'))
            return std::nullopt;
    std::string_view rest = head.substr(23);
    const auto last_space = rest.find_last_of(' ');
    if (last_space == std::string_view::npos || last_space + 1 >= rest.size()) return std::nullopt;
    const std::string_view pid_text = rest.substr(last_space + 1);
    int pid = 0;
    const auto [end, error] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
    if (error != std::errc() || end != pid_text.data() + pid_text.size() || pid <= 0) return std::nullopt;
    std::string_view source = rest.substr(0, last_space);
    while (!source.empty() && source.front() == ' ') source.remove_prefix(1);
    while (!source.empty() && source.back() == ' ') source.remove_suffix(1);
    if (source.empty()) return std::nullopt;
    std::string_view message = line.substr(close + 1);
    if (!message.empty() && message.front() == ' ') message.remove_prefix(1);
    return MpsLogLine{std::string(time), mps_printable(source), pid, mps_printable(message)};
}

namespace {

// The number after `key` in `text` ("{PID: 3701, Context ID: 1}" with key "PID: "), nullopt if none.
std::optional<int> number_after(std::string_view text, std::string_view key) {
    const auto at = text.find(key);
    if (at == std::string_view::npos) return std::nullopt;
    const char* first = text.data() + at + key.size();
    int value = 0;
    const auto [end, error] = std::from_chars(first, text.data() + text.size(), value);
    if (error != std::errc() || end == first || value <= 0) return std::nullopt;
    return value;
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}
bool all_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void add_sorted(std::vector<int>& pids, int pid) {
    const auto at = std::lower_bound(pids.begin(), pids.end(), pid);
    if (at == pids.end() || *at != pid) pids.insert(at, pid);
}
void add_client(MpsFatalError& error, int pid) { add_sorted(error.clients, pid); }

// What a server writes while it handles one fatal error, as recorded on the H100 with driver 580
// (tests/fixtures/mps-log/server-fault-*.log): the first line names one client (in the recordings
// not the one whose kernel faulted), the next ones every client torn down, the devices reset and the
// processes left with a sticky error, each pid or device on a line of its own after its heading; until it
// creates its context again it refuses new clients (tests/fixtures/mps-log/server-fault-refused-client.log).
enum class ListHeading { none, devices, sticky };

}  // namespace

std::vector<MpsFatalError> find_mps_fatal_errors(std::string_view control_log, std::string_view server_log) {
    // Fatal errors logged before the control daemon last started belong to a daemon that is gone.
    std::string since;
    for (std::size_t at = 0; at < control_log.size();) {
        const auto end = std::min(control_log.find('\n', at), control_log.size());
        const auto line = parse_mps_log_line(control_log.substr(at, end - at));
        if (line && starts_with(line->message, "Starting control daemon")) since = line->time;
        at = end + 1;
    }
    std::vector<MpsFatalError> errors;
    std::vector<std::pair<int, std::size_t>> open;  // server pid -> its error being described
    ListHeading heading = ListHeading::none;
    for (std::size_t at = 0; at < server_log.size();) {
        const auto end = std::min(server_log.find('\n', at), server_log.size());
        const auto parsed = parse_mps_log_line(server_log.substr(at, end - at));
        at = end + 1;
        if (!parsed || parsed->time < since) continue;
        const MpsLogLine& line = *parsed;
        const std::string_view message = line.message;
        const auto current = std::find_if(open.begin(), open.end(), [&](const auto& o) { return o.first == line.pid; });
        if (ends_with(message, "encountered a fatal GPU error.")) {
            MpsFatalError error;
            error.time = line.time;
            error.server_pid = line.pid;
            error.what = line.message;
            if (const auto pid = number_after(message, "PID: ")) {
                error.reported_client = *pid;
                add_client(error, *pid);
            }
            errors.push_back(std::move(error));
            if (current != open.end()) current->second = errors.size() - 1;
            else open.emplace_back(line.pid, errors.size() - 1);
            heading = ListHeading::none;
            continue;
        }
        if (current == open.end()) continue;
        MpsFatalError& error = errors[current->second];
        if (message == "The following devices will be reset:") {
            heading = ListHeading::devices;
        } else if (message == "The following client process have a sticky error set:") {
            heading = ListHeading::sticky;
        } else if (all_digits(message) && heading != ListHeading::none) {
            int value = 0;
            const auto [end_of_number, failed] = std::from_chars(message.data(), message.data() + message.size(), value);
            if (failed == std::errc() && end_of_number == message.data() + message.size()) {
                if (heading == ListHeading::devices) error.devices_reset.push_back(value);
                else if (value > 0) add_client(error, value);
            }
        } else {
            heading = ListHeading::none;
            if (ends_with(message, "to be torn down") || starts_with(message, "All clients belonging to error")) {
                const auto pid = starts_with(message, "All clients") ? number_after(message, "process ")
                                                                     : number_after(message, "PID: ");
                if (pid) add_client(error, *pid);
            } else if (starts_with(message, "Server teardown in progress. Refusing to accept new client")) {
                if (const auto pid = number_after(message, "PID: ")) add_sorted(error.refused, *pid);
            } else if (starts_with(message, "Creating server context")) {
                open.erase(current);  // the server took clients again: this error is fully described
            }
        }
    }
    return errors;
}

std::vector<MpsFatalError> of_servers(std::vector<MpsFatalError> errors, const std::vector<int>& server_pids) {
    std::erase_if(errors, [&](const MpsFatalError& e) {
        return std::find(server_pids.begin(), server_pids.end(), e.server_pid) == server_pids.end();
    });
    return errors;
}

std::string mps_log_directory() {
    const char* env = std::getenv("CUDA_MPS_LOG_DIRECTORY");
    return env != nullptr && env[0] != '\0' ? env : "/tmp/nvidia-mps-log";
}

std::string read_mps_log_tail(const std::string& path, std::size_t max_bytes) {
    auto file = open_regular(path, O_RDONLY, Links::refuse, "MPS log", true);
    if (!file) return {};
    // The log only grows while we read; a size taken now bounds the read whatever happens after.
    const auto size = static_cast<std::size_t>(std::max<off_t>(file->size, 0));
    const std::size_t from = size > max_bytes ? size - max_bytes : 0;
    std::string text(size - from, '\0');
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::pread(file->fd.get(), text.data() + done, text.size() - done, static_cast<off_t>(from + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            throw UserError(fmt::format("{}: cannot read the MPS log: {}", one_line(path), std::strerror(errno)));
        if (n == 0) break;  // truncated under us: what was read is all there is
        done += static_cast<std::size_t>(n);
    }
    text.resize(done);
    if (from > 0) {  // started inside a line: drop its tail
        const auto newline = text.find('\n');
        text.erase(0, newline == std::string::npos ? text.size() : newline + 1);
    }
    return text;
}

std::vector<MpsFatalError> read_mps_fatal_errors(const std::string& directory) {
    const std::string control = read_mps_log_tail(directory + "/control.log");
    // A daemon started with -f (gpupart-mps@.service) writes no server.log: its servers' lines are in the
    // one file its output goes to, beside its own, and are told apart by their source and pid.
    struct stat server_log {};
    if (::lstat((directory + "/server.log").c_str(), &server_log) != 0 && errno == ENOENT)
        return find_mps_fatal_errors(control, control);
    return find_mps_fatal_errors(control, read_mps_log_tail(directory + "/server.log"));
}

}  // namespace gpupart
