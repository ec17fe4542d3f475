#pragma once
// An error caused by what the user gave us (a mask, a file, a PID). Its message is one line the user
// can act on; front ends print it as it is and change nothing.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpupart {

class UserError : public std::runtime_error {
public:
    explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

// `text` made one line that is safe to show on a terminal or in a table: newline, CR and tab as \n \r
// \t, other control bytes (C0, DEL) and bytes that are not UTF-8 as \xNN, C1 controls and the bidi
// overrides that reorder what is shown after them as \u{NNNN}. The one escaper for every string that came
// from another process or a shared file (command lines, user and profile names, file names, slot
// problems) at the point where a front end shows it; JSON output keeps the raw text (JSON escapes).
// Backslashes are kept, so one_line(one_line(x)) == one_line(x): escaping twice on the way is harmless.
std::string one_line(std::string_view text);

// one_line(text), cut after `max_chars` characters (code points, never inside one): for fixed columns.
std::string one_line(std::string_view text, std::size_t max_chars);

// `json` (the text a JSON writer made, valid UTF-8) with every character one_line escapes as \u{NNNN}
// (C1 controls, bidi embeddings, overrides and isolates) written as a JSON escape \uNNNN instead: the same
// JSON value, but a terminal that shows the answer neither acts on nor reorders it. For every JSON answer
// (list, history, profile documents) that carries other processes' text.
std::string escape_hidden_in_json(std::string_view json);

// `text` with every byte that is not UTF-8 replaced by U+FFFD, all else exact: for records kept as JSON
// (the journal), which cannot carry such bytes and would fail whole. Not for display: that is one_line.
std::string valid_utf8(std::string_view text);

}  // namespace gpupart
