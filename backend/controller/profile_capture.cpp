#include "controller/profile_capture.hpp"

#include <fmt/format.h>

#include "controller/profile_apply.hpp"
#include "platform/process_identity.hpp"
#include "platform/user_names.hpp"

namespace gpupart {
std::string escaped_glob(const std::string& text) {
    std::string glob;
    for (const char c : text) {
        if (c == '*' || c == '?' || c == '[' || c == '\\') glob += '\\';
        glob += c;
    }
    return glob;
}

Profile capture_profile(const SystemState& state, const std::string& name) {
    Profile profile;
    profile.name = name;
    profile.description = fmt::format("saved by gpupart from {} partitioned processes", state.processes.size());
    for (const ProcessState& process : state.processes) {
        if (!process.partitioned) continue;
        const ProcessFacts facts = facts_of(process);
        int same = 0;
        for (const ProcessState& other : state.processes) {
            const ProcessFacts other_facts = facts_of(other);
            if (other.partitioned && other_facts.exe == facts.exe && other_facts.uid == facts.uid) ++same;
        }
        ProfileRule rule;
        rule.match.exe = facts.exe;
        // A uid with no passwd entry is written as its number: user_name's "uid 1234" would match nobody.
        const std::string user = user_name(facts.uid);
        rule.match.user = user.starts_with("uid ") ? std::to_string(facts.uid) : user;
        if (same > 1) rule.match.cmdline = escaped_glob(facts.cmdline);
        rule.gpu = state.gpu.index;
        rule.tpcs = process.mask.to_list();
        profile.rules.push_back(std::move(rule));
    }
    return profile;
}

}  // namespace gpupart
