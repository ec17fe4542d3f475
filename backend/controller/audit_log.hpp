#pragma once
// The audit trail: every change gpupart makes to ANOTHER user's process (which only root and
// the admin group of an installed registry may make) goes to the system log, so the owner and the
// administrator can see afterwards who moved whose process, from what to what. The user's own journal
// (journal.hpp) is private to the one who made the change; this is the machine's record.
//
// Where it goes: syslog(3), facility authpriv, priority notice, tag "gpupart" (journald and rsyslog take
// it from /dev/log). GPUPART_AUDIT_SOCKET=PATH sends the same records instead as datagrams to the unix
// socket PATH ("<PRI>gpupart[PID]: MESSAGE", what syslog(3) writes to /dev/log): the tests read them there,
// since CI has no /dev/log. This is a record of what gpupart did, not a guard: whoever may change a slot
// may also write it with another program, or point GPUPART_AUDIT_SOCKET elsewhere.
#include <optional>
#include <string>
#include <vector>

#include "controller/journal.hpp"
#include "controller/rules.hpp"

namespace gpupart {

struct AuditActor {
    unsigned uid = 0;
    std::string user;
    std::optional<unsigned> login_uid;  // /proc/self/loginuid: who logged in, behind sudo (nullopt: unset)
};

AuditActor current_actor();

// One record, one line: who (uid, user, login uid), what (the journal's action and entry id), which
// process (pid, start time, owner, command escaped with one_line, quotes as \x22), before and after
// (TPC lists and masks). Values that users control are quoted, so none can forge another key.
std::string audit_message(const AuditActor& actor, const std::string& action, JournalId entry, const PlannedChange& change);

// Logs every change of `changes` to a process of another user than `actor`. Returns one line for each
// record that could not be delivered (no /dev/log, the socket refused), for the caller's notes: the
// change is already made and journaled, so this never throws.
std::vector<std::string> audit_changes(const AuditActor& actor, const std::string& action, JournalId entry,
                                       const std::vector<const PlannedChange*>& changes);

}  // namespace gpupart
