#pragma once
// Partition profiles: a named, versioned JSON file of rules, each matching processes (by executable
// name, command-line glob, user or pid) and giving them TPCs on a GPU. Applying one changes matching
// processes now and, through the registry's rules table, those that start later.
//
// {
//   "format": "gpupart-profile", "version": 1, "name": "serving", "description": "one line",
//   "rules": [
//     {"match": {"exe": "python3", "cmdline": "*serve.py*", "user": "alice", "pid": 1234},
//      "gpu": 0, "tpcs": "gpc0-3"}
//   ]
// }
// In a rule every given match key must hold (at least one is required); "tpcs" is a mask expression
// (0-3,9-16 | 0xff | gpc2 | all | 8 tpcs | 2 gpcs | 25%), checked for syntax here and against the GPU
// when applied. Reading is strict: a malformed file is one UserError naming file, line and field.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpupart {

inline constexpr const char* kProfileFormatName = "gpupart-profile";
// Version 2: a rule's numbers and hex masks are TPC numbers. Version 1 (written before) meant launch-descriptor
// bits by them: such a rule is read as the same bits ("bits:0x..."), so an old profile keeps its TPCs.
inline constexpr int kProfileFormatVersion = 2;
inline constexpr int kProfileBitsFormatVersion = 1;

struct ProfileMatch {
    std::optional<std::string> exe;      // executable's base name ("python3")
    std::optional<std::string> cmdline;  // fnmatch(3) glob over the command line, args joined by spaces
    std::optional<std::string> user;     // user name or numeric uid
    std::optional<int> pid;              // only ever matches a process running when the profile is applied
    bool operator==(const ProfileMatch&) const = default;
};

struct ProfileRule {
    ProfileMatch match;
    int gpu = 0;
    std::string tpcs;  // mask expression
    int line = 0;      // line of the rule in its file (0 when built in memory)
    bool operator==(const ProfileRule& other) const { return match == other.match && gpu == other.gpu && tpcs == other.tpcs; }
};

struct Profile {
    std::string name;  // [A-Za-z0-9._-]+, also the file name without ".json"
    std::string description;
    std::vector<ProfileRule> rules;
    bool operator==(const Profile& other) const {
        return name == other.name && description == other.description && rules == other.rules;
    }
};

// What a rule is matched against.
struct ProcessFacts {
    int pid = 0;
    unsigned uid = 0;
    std::string exe;      // base name of the executable
    std::string cmdline;  // args joined by spaces
};

// Throws UserError: "profile FILE:LINE: field rules[2].match.exe: expected a string, got number".
Profile parse_profile(std::string_view text, const std::string& file);
std::string profile_text(const Profile& profile);  // stable JSON (2-space indent), parse_profile reads it back
bool rule_matches(const ProfileRule& rule, const ProcessFacts& process);
bool valid_profile_name(std::string_view name);

}  // namespace gpupart
