#pragma once
// What must hold for any input to parse_profile, checked by the fuzz target and by the corpus replay
// test: it returns a profile or throws UserError with a one-line message naming the file, and what it
// returns writes out and reads back as the same profile. Returns the broken property, or "".
#include <string>
#include <string_view>

#include "controller/profile.hpp"
#include "model/user_error.hpp"

namespace gpupart::fuzz {

inline std::string check_profile_properties(std::string_view text) {
    const std::string file = "input.json";
    Profile profile;
    try {
        profile = parse_profile(text, file);
    } catch (const UserError& error) {
        const std::string message = error.what();
        if (message.find('\n') != std::string::npos) return "error message is not one line: " + message;
        if (!message.starts_with("profile " + file + ":")) return "error message does not name the file: " + message;
        return "";
    }
    if (!valid_profile_name(profile.name)) return "accepted an invalid profile name";
    for (const ProfileRule& rule : profile.rules)
        if (rule.line < 1) return "a rule has no line";
    const std::string written = profile_text(profile);
    if (parse_profile(written, "written.json") != profile) return "profile_text does not read back as the same profile";
    if (profile_text(parse_profile(written, "written.json")) != written) return "profile_text is not stable";
    return "";
}

}  // namespace gpupart::fuzz
