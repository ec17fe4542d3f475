#include "controller/profile_apply.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <pwd.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/gpu_queries.hpp"
#include "model/mask_resolve.hpp"
#include "model/tpc_numbering.hpp"
#include "model/user_error.hpp"
#include "registry/registry_slot.h"
#include "registry/slot_file.hpp"

namespace gpupart {
namespace {

// A user name or number, as a profile writes it, to a uid.
std::optional<unsigned> uid_of(const std::string& user) {
    if (!user.empty() && user.find_first_not_of("0123456789") == std::string::npos) return static_cast<unsigned>(std::stoul(user));
    struct passwd entry {};
    struct passwd* found = nullptr;
    char buffer[4096];
    if (::getpwnam_r(user.c_str(), &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr) return found->pw_uid;
    return std::nullopt;
}

const ProfileRule* first_match(const Profile& profile, const ProcessFacts& facts) {
    for (const ProfileRule& rule : profile.rules)
        if (rule_matches(rule, facts)) return &rule;
    return nullptr;
}

std::string where(const Profile& profile, const ProfileRule& rule) {
    return rule.line > 0 ? fmt::format("profile {} line {}", profile.name, rule.line) : fmt::format("profile {}", profile.name);
}

}  // namespace

ProcessFacts facts_of(const ProcessState& process) {
    ProcessFacts facts;
    facts.pid = process.pid;
    facts.uid = process.uid;
    facts.cmdline = process.command;
    const std::string argv0 = process.command.substr(0, process.command.find(' '));
    facts.exe = std::filesystem::path(argv0).filename().string();
    return facts;
}

ProfileApplication plan_profile(const Controller& controller, const Profile& profile, int gpu_index) {
    ProfileApplication result;
    const SystemState& state = controller.state();
    std::vector<SetRequest> requests;
    for (const ProcessState& process : state.processes)
        if (const ProfileRule* rule = first_match(profile, facts_of(process)); rule != nullptr && rule->gpu == gpu_index)
            requests.push_back({process.pid, rule->tpcs, Placement::packed});
    result.plan = controller.plan_set(requests, fmt::format("profile apply {}", profile.name));

    // Later processes: each rule resolved now, counts placed on TPCs nobody holds once this plan applies.
    TpcMask taken;
    for (const ProcessState& process : state_after(state, result.plan.changes).processes)
        if (process.partitioned) taken |= process.mask;
    std::memcpy(result.rules.magic, GPUPART_RULES_MAGIC, sizeof result.rules.magic);
    result.rules.layout_version = GPUPART_REGISTRY_LAYOUT_VERSION;
    result.rules.file_size = sizeof result.rules;
    result.rules.owner_uid = ::getuid();
    std::snprintf(result.rules.profile, sizeof result.rules.profile, "%s", profile.name.c_str());
    const TpcMask real = real_tpcs(state.gpu);
    // The shim copies an armed rule's masks into a new process's control block as they are: the table holds
    // launch-descriptor bits, like the slots, so each rule's TPC numbers are written through the GPU's map.
    std::string no_map;
    const std::optional<TpcNumbering> numbering = TpcNumbering::try_of(state.gpu, &no_map);
    // Rules are kept per GPU: the rules armed for other GPUs stay as they are (each GPU's profile is applied
    // against that GPU's floorplan); this GPU's are replaced.
    const gpupart_gpu_uuid this_gpu = uuid_words(state.gpu_uuid);
    if (const ArmedRules armed = read_armed_rules(controller.registry_directory()))
        for (std::uint32_t i = 0; i < armed->count && i < GPUPART_RULES_MAX; ++i)
            if (!gpupart_uuid_equal(&armed->rules[i].gpu, &this_gpu)) result.rules.rules[result.rules.count++] = armed->rules[i];
    for (const ProfileRule& rule : profile.rules) {
        const std::string from = where(profile, rule);
        if (rule.match.pid) {
            result.not_armed.push_back(fmt::format("{}: matches pid {}, which only a running process has", from, *rule.match.pid));
            continue;
        }
        if (rule.gpu != gpu_index) {
            result.not_armed.push_back(fmt::format("{}: for GPU {}, not GPU {}", from, rule.gpu, gpu_index));
            continue;
        }
        if (result.rules.count >= GPUPART_RULES_MAX) {
            result.plan.findings.push_back({Severity::error, "registry layout",
                                            fmt::format("{}: more than {} rules", from, GPUPART_RULES_MAX), "too-many-rules"});
            break;
        }
        gpupart_rule& out = result.rules.rules[result.rules.count];
        out = gpupart_rule{};  // a rule refused below may have filled part of this entry
        out.line = static_cast<std::uint32_t>(rule.line);
        out.gpu = this_gpu;
        // The table has fixed-size fields: a longer exe or pattern is refused, never cut short.
        const auto copy = [&](const std::optional<std::string>& value, std::uint32_t flag, char* field, std::size_t size,
                              const char* what) {
            if (!value) return true;
            if (value->size() >= size) {
                result.plan.findings.push_back({Severity::error, "registry layout",
                                                fmt::format("{}: {} longer than {} bytes", from, what, size - 1), "rule-too-long"});
                return false;
            }
            out.match |= flag;
            std::snprintf(field, size, "%s", value->c_str());
            return true;
        };
        if (!copy(rule.match.exe, GPUPART_RULE_MATCH_EXE, out.exe, sizeof out.exe, "exe name") ||
            !copy(rule.match.cmdline, GPUPART_RULE_MATCH_CMDLINE, out.cmdline, sizeof out.cmdline, "cmdline pattern"))
            continue;
        if (rule.match.user) {
            const auto uid = uid_of(*rule.match.user);
            if (!uid) {
                result.plan.findings.push_back({Severity::error, "profile", fmt::format("{}: no user '{}' on this machine", from, *rule.match.user), "unknown-user"});
                continue;
            }
            out.match |= GPUPART_RULE_MATCH_UID;
            out.uid = *uid;
        }
        TpcMask mask;
        try {
            const MaskExpression expression = parse_mask_expression(rule.tpcs);
            const auto placed = place_request(state.gpu, expression, real & ~taken, Placement::packed);
            mask = placed ? *placed : resolve_mask(expression, state.gpu).mask;
            if (placed) taken |= mask;  // two rules "8 tpcs" get different TPCs
        } catch (const UserError& error) {
            result.plan.findings.push_back({Severity::error, "TPC numbers and descriptor holes (measured on the H200)", fmt::format("{}: {}", from, error.what()), "bad-mask"});
            continue;
        }
        if (!numbering) {
            result.plan.findings.push_back({Severity::error, "registry layout",
                                            fmt::format("{}: cannot be armed: {}", from, no_map), "mask-bits-unknown"});
            continue;
        }
        mask_to_words(numbering->to_bits(mask), out.allowed);
        mask_to_words(numbering->to_bits(real), out.real_tpcs);
        result.armed.push_back(fmt::format("{}: processes that start later matching it get TPCs {}", from, mask.to_list()));
        ++result.rules.count;
    }
    result.rules.written_realtime_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
    // The table replaces the caller's armed one (a profile with nothing to arm disarms it), in the same
    // journal entry as the masks, so undoing the apply puts the previous rules back too.
    ArmedRules before = read_armed_rules(controller.registry_directory());
    ArmedRules after = result.rules.count > 0 ? ArmedRules(result.rules) : std::nullopt;
    if (!same_rules(before, after)) {
        result.plan.rules = RulesChange{std::move(before), std::move(after)};
        // Arming the rules is a change: running processes already as the profile says do not refuse it.
        for (Finding& finding : result.plan.findings)
            if (finding.id == "no-change" && finding.severity == Severity::error) finding.severity = Severity::info;
    }
    return result;
}

ProfileDrift profile_drift(const Controller& controller, const Profile& profile, int gpu_index) {
    ProfileDrift drift;
    const ProfileApplication application = plan_profile(controller, profile, gpu_index);
    for (const ProcessState& process : controller.state().processes) {
        ProcessDrift entry{process.pid, process.start_time, process.command, process.partitioned ? process.mask.to_list() : "all",
                           std::nullopt};
        for (const auto* list : {&application.plan.changes, &application.plan.unchanged})
            for (const auto& c : *list)
                if (c.pid == process.pid) entry.profile_tpcs = c.after.to_list();
        if (entry.profile_tpcs && !(process.partitioned && entry.profile_tpcs == entry.now_tpcs)) drift.drifted = true;
        drift.processes.push_back(std::move(entry));
    }
    if (application.plan.rules) {
        drift.rules = rules_change_text(*application.plan.rules);
        drift.drifted = true;
    }
    for (const auto& finding : application.plan.findings)
        // "changes nothing" refuses applying a profile already in effect: for a diff that is no drift.
        if (finding.severity == Severity::error && finding.id != "no-change") {
            drift.errors.push_back(finding.message);
            drift.drifted = true;  // a profile that cannot be applied now is not in effect
        }
    return drift;
}

std::vector<std::string> profile_diff(const Controller& controller, const Profile& profile, int gpu_index) {
    std::vector<std::string> lines;
    const ProfileDrift drift = profile_drift(controller, profile, gpu_index);
    for (const ProcessDrift& p : drift.processes) {
        const std::string command = p.command.substr(0, 50);
        if (!p.profile_tpcs)
            lines.push_back(fmt::format("  process {} ({}): TPCs {}, no rule matches", p.pid, command, p.now_tpcs));
        else if (*p.profile_tpcs == p.now_tpcs)
            lines.push_back(fmt::format("  process {} ({}): TPCs {}, as the profile says", p.pid, command, p.now_tpcs));
        else
            lines.push_back(fmt::format("~ process {} ({}): TPCs {} -> {}", p.pid, command, p.now_tpcs, *p.profile_tpcs));
    }
    if (drift.rules) lines.push_back("~ " + *drift.rules);
    for (const auto& error : drift.errors) lines.push_back("! " + error);
    return lines;
}

}  // namespace gpupart
