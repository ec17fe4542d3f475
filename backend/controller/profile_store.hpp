#pragma once
// Where profiles live: the user's ($XDG_CONFIG_HOME/gpupart/profiles, else ~/.config/gpupart/profiles)
// and the system's (/etc/gpupart/profiles). A user's profile shadows a system one of the same name.
#include <string>
#include <vector>

#include "controller/profile.hpp"

namespace gpupart {

struct StoredProfile {
    Profile profile;
    std::string path;
    bool system = false;  // from /etc/gpupart/profiles
};

struct ProfileStore {
    std::string user_dir;    // default: as above
    std::string system_dir;  // default: /etc/gpupart/profiles
    static ProfileStore standard();

    // Every readable profile; malformed files are skipped and reported in `problems` (one line each).
    std::vector<StoredProfile> list(std::vector<std::string>* problems = nullptr) const;
    // A name (user dir first, then system dir) or a path to a .json file. Throws UserError.
    StoredProfile load(const std::string& name_or_path) const;
    // Into the user dir, atomically (temporary file + rename). Refuses to replace an existing profile
    // unless `overwrite`. Returns the path. Throws UserError.
    std::string save(const Profile& profile, bool overwrite) const;
    // Only the user's own profiles can be deleted. Throws UserError.
    std::string remove(const std::string& name) const;
};

}  // namespace gpupart
