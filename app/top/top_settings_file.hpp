#pragma once
// gpupart top's settings kept between sessions, as htop keeps its htoprc: the sort column and direction,
// the refresh interval, colours, ASCII glyphs and the sections shown, in $XDG_CONFIG_HOME/gpupart/toprc
// (else ~/.config/gpupart/toprc), a small key=value text file. Not the filter, as in htop: a view that starts
// with processes hidden by a filter typed last week would mislead.
//
// The file is read defensively (it may be a FIFO, a symlink, huge or garbage: one line of warning and the
// defaults, never a hang) and written atomically (a temporary file renamed over it), only when the user
// changed a setting in the session; what the command line set for one session (-d, -C, --sort, NO_COLOR)
// is not written unless the user changed it again in the session.
#include <optional>
#include <string>
#include <string_view>

#include "top/top_ui_state.hpp"

namespace gpupart::top {

// What toprc holds.
struct SavedView {
    Settings settings;
    SortKey sort = SortKey::pid;
    bool sort_descending = false;
    bool operator==(const SavedView&) const = default;
};

inline constexpr std::size_t kToprcMaxBytes = 16 * 1024;  // a real one is about 200 bytes

// $XDG_CONFIG_HOME/gpupart/toprc (an absolute XDG_CONFIG_HOME only, as the XDG spec says), else
// $HOME/.config/gpupart/toprc, else the password database's home; nullopt when there is no home at all.
std::optional<std::string> toprc_path();

std::string toprc_text(const SavedView& view);

// Every line understood is taken; a line that is not (an unknown value, a delay out of range) keeps that
// setting's default, and `problem` names the first such line. Unknown keys are skipped without a word, so
// that a toprc written by a later gpupart does not warn at every start of this one.
struct ParsedToprc {
    SavedView view;
    std::string problem;  // empty: every line was understood
};
ParsedToprc parse_toprc(std::string_view text);

// Never throws: a file that cannot be used gives the defaults and a one-line `warning` naming the file.
// A missing file is no news (no warning).
struct LoadedToprc {
    SavedView view;
    std::string warning;
};
LoadedToprc load_toprc(const std::string& path);

// Writes `view` to `path` atomically (its directory made if missing). Throws UserError with one line.
void save_toprc(const std::string& path, const SavedView& view);

// What to keep at the end of a session: the file's values, with each setting the user changed during the
// session (`at_end` differs from `at_start`) taken from `at_end`. Settings the command line chose for this
// session alone are in `at_start` and `at_end` alike, so they are not written.
SavedView settings_to_save(const SavedView& from_file, const SavedView& at_start, const SavedView& at_end);

}  // namespace gpupart::top
