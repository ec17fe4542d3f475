#include "controller/audit_log.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "model/user_error.hpp"
#include "platform/proc_file.hpp"
#include "platform/user_names.hpp"

namespace gpupart {
namespace {

constexpr std::size_t kCommandChars = 256;  // a record stays one short syslog line

// A value users control, quoted: one_line leaves no control byte, and a quote becomes \x22 (one_line's
// own notation), so the value always ends at the next quote.
std::string audit_quoted(std::string_view text, std::size_t max_chars = 1024) {
    std::string out = "\"";
    for (const char c : one_line(text, max_chars)) out += c == '"' ? std::string("\\x22") : std::string(1, c);
    return out + "\"";
}

std::string audit_tpcs(bool partitioned, const TpcMask& mask) { return partitioned ? mask.to_list() : "all"; }

// The datagram syslog(3) would send to /dev/log, to the socket the test named.
std::string send_datagram(const std::string& path, const std::string& message) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) return fmt::format("GPUPART_AUDIT_SOCKET {}: path too long", one_line(path));
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fmt::format("audit socket: {}", std::strerror(errno));
    const std::string datagram = fmt::format("<{}>gpupart[{}]: {}", LOG_AUTHPRIV | LOG_NOTICE, ::getpid(), message);
    const ssize_t sent = ::sendto(fd, datagram.data(), datagram.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&address),
                                  sizeof address);
    const int error = errno;
    ::close(fd);
    if (sent < 0) return fmt::format("GPUPART_AUDIT_SOCKET {}: {}", one_line(path), std::strerror(error));
    return "";
}

// Where syslog(3) writes; it says nothing when that is missing, so we check and say it ourselves.
bool system_log_present() {
    struct stat info {};
    return ::stat("/dev/log", &info) == 0 && S_ISSOCK(info.st_mode);
}

}  // namespace

AuditActor current_actor() {
    AuditActor actor;
    actor.uid = ::geteuid();
    actor.user = user_name(actor.uid);
    const std::string login = read_first_line("/proc/self/loginuid");
    if (!login.empty() && login != "4294967295") {
        try {
            actor.login_uid = static_cast<unsigned>(std::stoul(login));
        } catch (const std::exception&) {
            // not a number: left out of the record rather than guessed
        }
    }
    return actor;
}

std::string audit_message(const AuditActor& actor, const std::string& action, JournalId entry, const PlannedChange& change) {
    return fmt::format("changed another user's process: uid={} user={}{} action={} journal_entry={} pid={} start_time={} "
                       "owner_uid={} owner={} command={} before={} after={} before_mask={} after_mask={}",
                       actor.uid, audit_quoted(actor.user), actor.login_uid ? fmt::format(" login_uid={}", *actor.login_uid) : "",
                       audit_quoted(action), entry, change.pid, change.start_time, change.uid, audit_quoted(user_name(change.uid)),
                       audit_quoted(change.command, kCommandChars), audit_tpcs(change.before_partitioned, change.before),
                       audit_tpcs(change.after_partitioned, change.after),
                       change.before_partitioned ? change.before.to_hex_padded() : "all",
                       change.after_partitioned ? change.after.to_hex_padded() : "all");
}

std::vector<std::string> audit_changes(const AuditActor& actor, const std::string& action, JournalId entry,
                                       const std::vector<const PlannedChange*>& changes) {
    std::vector<std::string> problems;
    const char* socket = std::getenv("GPUPART_AUDIT_SOCKET");
    for (const PlannedChange* change : changes) {
        if (change->uid == actor.uid) continue;  // one's own process: the user's journal has it
        const std::string message = audit_message(actor, action, entry, *change);
        if (socket != nullptr && *socket != '\0') {
            if (std::string problem = send_datagram(socket, message); !problem.empty())
                problems.push_back(fmt::format("audit record for process {} not sent: {}", change->pid, problem));
            continue;
        }
        if (!system_log_present()) {
            problems.push_back(fmt::format("audit record for process {} not logged: no system log (/dev/log)", change->pid));
            continue;
        }
        ::openlog("gpupart", LOG_PID, LOG_AUTHPRIV);
        ::syslog(LOG_NOTICE, "%s", message.c_str());
        ::closelog();
    }
    return problems;
}

}  // namespace gpupart
