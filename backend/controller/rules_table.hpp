#pragma once
// The calling user's armed profile rules (`<registry>/rules-<uid>`, registry_layout.h) as the controller
// plans and journals them: a profile apply replaces the table, and undoing that apply puts the one it
// replaced back, so "applying a profile is one undoable change" holds for later processes too.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "registry/registry_layout.h"

namespace gpupart {

// The table a plan leaves armed: a value to arm, nullopt to disarm.
using ArmedRules = std::optional<gpupart_rules_file>;

struct RulesChange {
    ArmedRules before;  // the caller's table when the plan was made
    ArmedRules after;   // what applying leaves
};

// The calling user's armed table; nullopt when none is armed. Throws UserError when one is there but
// cannot be read (not that user's, another layout).
ArmedRules read_armed_rules(const std::string& registry_dir);
// Writes the calling user's table (`rules`) or removes it (nullopt); throws UserError.
void write_armed_rules(const std::string& registry_dir, const ArmedRules& rules);

// The same rules for the same profile; when and by whom the table was written do not count.
bool same_rules(const ArmedRules& a, const ArmedRules& b);
inline bool operator==(const RulesChange& a, const RulesChange& b) {
    return same_rules(a.before, b.before) && same_rules(a.after, b.after);
}
// "profile serving (3 rules)", or "no rules".
std::string rules_summary(const ArmedRules& rules);
// "rules for processes that start later: no rules -> profile serving (3 rules)", as plans, the history
// and `gpupart top` say it.
std::string rules_change_text(const RulesChange& change, std::string_view arrow = "->");

// The table as the journal keeps it (null when none), and back. rules_from_json reads strictly (every
// field, nothing else) and throws SnapshotFormatError naming the field under `path`.
nlohmann::ordered_json rules_json(const ArmedRules& rules);
ArmedRules rules_from_json(const nlohmann::ordered_json& json, const std::string& path);

}  // namespace gpupart
