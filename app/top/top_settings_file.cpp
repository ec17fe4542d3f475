#include "top/top_settings_file.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "model/user_error.hpp"
#include "platform/make_directories.hpp"
#include "platform/safe_file.hpp"

namespace gpupart::top {
namespace {

std::optional<std::string> home_directory() {
    if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') return std::string(home);
    std::vector<char> buffer(4096);
    passwd entry{};
    passwd* found = nullptr;
    if (::getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr && found->pw_dir != nullptr &&
        found->pw_dir[0] == '/')
        return std::string(found->pw_dir);
    return std::nullopt;
}

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
    return text;
}

std::optional<bool> yes_no(std::string_view value) {
    if (value == "yes" || value == "1" || value == "true") return true;
    if (value == "no" || value == "0" || value == "false") return false;
    return std::nullopt;
}

const char* yes_no(bool value) { return value ? "yes" : "no"; }

// Sets the setting `key` from `value`; false when the value is not one it takes. Unknown keys are taken
// (and ignored): see parse_toprc.
bool apply(SavedView& view, std::string_view key, std::string_view value) {
    Settings& s = view.settings;
    const auto flag = [&](bool& field) {
        const auto parsed = yes_no(value);
        if (parsed) field = *parsed;
        return parsed.has_value();
    };
    if (key == "sort") {
        const auto sort = sort_key_named(value);
        if (sort) view.sort = *sort;
        return sort.has_value();
    }
    if (key == "sort_descending") return flag(view.sort_descending);
    if (key == "delay_tenths") {
        int tenths = 0;
        const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), tenths);
        if (error != std::errc{} || end != value.data() + value.size() || tenths < 1 || tenths > 600) return false;
        s.delay_tenths = tenths;
        return true;
    }
    if (key == "colour") return flag(s.colour);
    if (key == "findings") return flag(s.show_findings);
    if (key == "sm_ids") return flag(s.show_sm_ids);
    if (key == "ascii") return flag(s.ascii);
    if (key == "floorplan") return flag(s.show_floorplan);
    return true;
}

}  // namespace

std::optional<std::string> toprc_path() {
    if (const char* config = std::getenv("XDG_CONFIG_HOME"); config != nullptr && config[0] == '/')
        return std::string(config) + "/gpupart/toprc";
    if (const auto home = home_directory()) return *home + "/.config/gpupart/toprc";
    return std::nullopt;
}

std::string toprc_text(const SavedView& view) {
    const Settings& s = view.settings;
    return fmt::format(
        "# gpupart top's settings, written when it quits after you changed one (F2, F6, < >, I, a click on a\n"
        "# column title). Lines are key=value; a line gpupart does not know is skipped. Options on the command\n"
        "# line (-d, -C, --sort) win over these for one session.\n"
        "sort={}\nsort_descending={}\ndelay_tenths={}\ncolour={}\nfindings={}\nsm_ids={}\nascii={}\nfloorplan={}\n",
        sort_key_name(view.sort), yes_no(view.sort_descending), s.delay_tenths, yes_no(s.colour), yes_no(s.show_findings),
        yes_no(s.show_sm_ids), yes_no(s.ascii), yes_no(s.show_floorplan));
}

ParsedToprc parse_toprc(std::string_view text) {
    ParsedToprc parsed;
    int number = 0;
    while (!text.empty()) {
        const auto end = text.find('\n');
        const std::string_view line = trimmed(text.substr(0, end));
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        ++number;
        if (line.empty() || line.front() == '#') continue;
        const auto equals = line.find('=');
        const bool understood = equals != std::string_view::npos &&
                                apply(parsed.view, trimmed(line.substr(0, equals)), trimmed(line.substr(equals + 1)));
        if (!understood && parsed.problem.empty())
            parsed.problem = fmt::format("line {} '{}' is not understood (that setting keeps its default)", number, one_line(line, 60));
    }
    return parsed;
}

LoadedToprc load_toprc(const std::string& path) {
    LoadedToprc loaded;
    try {
        // O_NONBLOCK, O_NOFOLLOW, a regular file only, at most kToprcMaxBytes (safe_file): never a hang.
        const auto text = read_regular_file_if_exists(path, kToprcMaxBytes, Links::refuse, "settings file");
        if (!text) return loaded;
        ParsedToprc parsed = parse_toprc(*text);
        loaded.view = parsed.view;
        if (!parsed.problem.empty()) loaded.warning = fmt::format("{}: {}", one_line(path), parsed.problem);
    } catch (const UserError& error) {
        loaded.view = SavedView{};
        loaded.warning = fmt::format("{} (gpupart top starts with its defaults)", error.what());
    }
    return loaded;
}

void save_toprc(const std::string& path, const SavedView& view) {
    const auto slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) {
        try {
            make_directories(path.substr(0, slash), 0700, "gpupart top settings");
        } catch (const UserError& error) {
            throw UserError(fmt::format("{}: settings not saved", error.what()));
        }
    }
    replace_file(path, toprc_text(view), 0644, "settings file");
}

SavedView settings_to_save(const SavedView& from_file, const SavedView& at_start, const SavedView& at_end) {
    SavedView saved = from_file;
    const auto keep = [](auto& into, const auto& start, const auto& end) {
        if (start != end) into = end;
    };
    keep(saved.sort, at_start.sort, at_end.sort);
    keep(saved.sort_descending, at_start.sort_descending, at_end.sort_descending);
    keep(saved.settings.delay_tenths, at_start.settings.delay_tenths, at_end.settings.delay_tenths);
    keep(saved.settings.colour, at_start.settings.colour, at_end.settings.colour);
    keep(saved.settings.show_findings, at_start.settings.show_findings, at_end.settings.show_findings);
    keep(saved.settings.show_sm_ids, at_start.settings.show_sm_ids, at_end.settings.show_sm_ids);
    keep(saved.settings.ascii, at_start.settings.ascii, at_end.settings.ascii);
    keep(saved.settings.show_floorplan, at_start.settings.show_floorplan, at_end.settings.show_floorplan);
    return saved;
}

}  // namespace gpupart::top
