#include "controller/profile_store.hpp"

#include <dirent.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/make_directories.hpp"
#include "platform/safe_file.hpp"

namespace gpupart {
namespace {

constexpr const char* kSystemProfileDir = "/etc/gpupart/profiles";
constexpr std::size_t kMaxProfileBytes = 1 << 20;

[[noreturn]] void fail(const std::string& message) { throw UserError(one_line(message)); }

bool ends_with_json(std::string_view name) { return name.size() > 5 && name.ends_with(".json"); }

bool is_path(std::string_view name_or_path) {
    return name_or_path.find('/') != std::string_view::npos || name_or_path.ends_with(".json");
}

std::string join(const std::string& dir, const std::string& name) {
    return dir.ends_with('/') ? dir + name : fmt::format("{}/{}", dir, name);
}

std::string file_of(const std::string& dir, const std::string& name) { return join(dir, name + ".json"); }

void check_name(const std::string& name) {
    if (!valid_profile_name(name))
        fail(fmt::format("profile '{}': not a profile name (1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.')",
                         name));
}

// The file's text; nullopt when it does not exist. A FIFO, device or directory, or a file over the
// bound, throws (one line) before anything is read. Links are followed: the path was typed, or is in
// the user's own directory or root's /etc/gpupart/profiles, where a link is the owner's choice.
std::optional<std::string> read_file(const std::string& path) {
    return read_regular_file_if_exists(path, kMaxProfileBytes, Links::follow, "profile");
}

// A profile read from DIR/NAME.json must call itself NAME: that is how it is found, saved and deleted.
StoredProfile read_stored(const std::string& path, const std::string& text, const std::string& stem, bool system) {
    StoredProfile stored{parse_profile(text, path), path, system};
    if (stored.profile.name != stem)
        fail(fmt::format("profile {}: its name is '{}', not '{}' as its file name says; rename one of them", path,
                         stored.profile.name, stem));
    return stored;
}

bool exists(const std::string& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0;
}

std::optional<std::string> home_dir() {
    if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') return std::string(home);
    std::vector<char> buffer(4096);
    passwd entry{};
    passwd* found = nullptr;
    if (::getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr &&
        found->pw_dir != nullptr && found->pw_dir[0] == '/')
        return std::string(found->pw_dir);
    return std::nullopt;
}

}  // namespace

ProfileStore ProfileStore::standard() {
    ProfileStore store;
    store.system_dir = kSystemProfileDir;
    // XDG base directories: a relative $XDG_CONFIG_HOME is invalid and ignored.
    if (const char* config = std::getenv("XDG_CONFIG_HOME"); config != nullptr && config[0] == '/')
        store.user_dir = join(config, "gpupart/profiles");
    else if (auto home = home_dir())
        store.user_dir = join(*home, ".config/gpupart/profiles");
    return store;
}

std::vector<StoredProfile> ProfileStore::list(std::vector<std::string>* problems) const {
    std::map<std::string, StoredProfile> found;  // by name
    std::set<std::string> taken;  // names in the user dir, readable or not: they shadow the system's
    for (const auto& [dir, system] : {std::pair{user_dir, false}, std::pair{system_dir, true}}) {
        if (dir.empty()) continue;
        DIR* stream = ::opendir(dir.c_str());
        if (stream == nullptr) {
            if (errno != ENOENT && problems)
                problems->push_back(one_line(fmt::format("profiles {}: cannot read: {}", dir, std::strerror(errno))));
            continue;
        }
        std::vector<std::string> stems;
        while (const dirent* entry = ::readdir(stream)) {
            const std::string file = entry->d_name;
            if (file.front() == '.' || !ends_with_json(file)) continue;  // also skips our temporary files
            stems.push_back(file.substr(0, file.size() - 5));
        }
        ::closedir(stream);
        std::sort(stems.begin(), stems.end());
        for (const std::string& stem : stems) {
            if (system ? taken.count(stem) > 0 : !taken.insert(stem).second) continue;
            const std::string path = file_of(dir, stem);
            try {
                if (!valid_profile_name(stem))
                    fail(fmt::format("profile {}: '{}' is not a profile name, so the file is ignored", path, stem));
                auto text = read_file(path);
                if (!text) continue;  // removed meanwhile
                found.emplace(stem, read_stored(path, *text, stem, system));
            } catch (const UserError& error) {
                if (problems) problems->push_back(error.what());
            }
        }
    }
    std::vector<StoredProfile> out;
    for (auto& [name, stored] : found) out.push_back(std::move(stored));
    return out;
}

StoredProfile ProfileStore::load(const std::string& name_or_path) const {
    if (is_path(name_or_path)) {
        auto text = read_file(name_or_path);
        if (!text) fail(fmt::format("profile {}: no such file", name_or_path));
        return StoredProfile{parse_profile(*text, name_or_path), name_or_path, false};
    }
    check_name(name_or_path);
    for (const auto& [dir, system] : {std::pair{user_dir, false}, std::pair{system_dir, true}}) {
        if (dir.empty()) continue;
        const std::string path = file_of(dir, name_or_path);
        if (auto text = read_file(path)) return read_stored(path, *text, name_or_path, system);
    }
    std::string known;
    for (const StoredProfile& stored : list()) known += (known.empty() ? "" : ", ") + stored.profile.name;
    fail(fmt::format("profile '{}': not found in {} or {} ({})", name_or_path, user_dir.empty() ? "(no user dir)" : user_dir,
                     system_dir, known.empty() ? "there are no profiles" : "there are: " + known));
}

std::string ProfileStore::save(const Profile& profile, bool overwrite) const {
    check_name(profile.name);
    if (ends_with_json(profile.name))
        fail(fmt::format("profile '{}': a name ending in .json would be read as a file path", profile.name));
    if (user_dir.empty()) fail("profiles: no user profile directory (set HOME or XDG_CONFIG_HOME)");
    const std::string path = file_of(user_dir, profile.name);
    const std::string text = profile_text(profile);
    parse_profile(text, path);  // never write what could not be read back (a bad mask, say)
    if (!overwrite && exists(path))
        fail(fmt::format("profile '{}' already exists ({}); refusing to replace it", profile.name, path));
    make_directories(user_dir, 0755, "profiles");

    // A new file with a random name, then rename (overwrite) or link(2), which puts it in place only if
    // nothing has the name, even if another save raced this one. A planted name is never written through.
    if (overwrite) replace_file(path, text, 0644, "profile");
    else if (!create_file(path, text, 0644, "profile"))
        fail(fmt::format("profile '{}' already exists ({}); refusing to replace it", profile.name, path));
    return path;
}

std::string ProfileStore::remove(const std::string& name) const {
    if (is_path(name)) fail(fmt::format("profile '{}': give a profile name, not a file", name));
    check_name(name);
    if (!user_dir.empty()) {
        const std::string path = file_of(user_dir, name);
        if (::unlink(path.c_str()) == 0) return path;
        if (errno != ENOENT) fail(fmt::format("profile {}: cannot delete: {}", path, std::strerror(errno)));
    }
    const std::string system_path = file_of(system_dir, name);
    if (!system_dir.empty() && exists(system_path))
        fail(fmt::format("profile '{}' is a system profile ({}); only your own profiles in {} can be deleted", name,
                         system_path, user_dir.empty() ? "your profile directory" : user_dir));
    fail(fmt::format("profile '{}': not found in {}", name, user_dir.empty() ? "(no user dir)" : user_dir));
}

}  // namespace gpupart
