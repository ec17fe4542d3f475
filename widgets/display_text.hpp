#pragma once
// Text that came from another process or a shared file (command lines, user and profile names, file
// names, slot problems), made safe for Qt: one_line (backend/model/user_error.hpp) escapes control
// bytes and invalid UTF-8, and rich text (every tooltip: Qt renders one as HTML when it looks like
// HTML) escapes '<' and '&' too, so "<b>" in a command line shows as "<b>", never as bold.
#include <string_view>

#include <QString>

namespace gpupart::widgets {

// one_line(text) as a QString: for table cells, plain-text labels and menu entries.
QString plain_text(std::string_view text);
// `text` (plain: escaped already where it came from outside) as a tooltip that is always rich text,
// HTML-escaped, newlines kept as line breaks.
QString tooltip_text(const QString& text);

}  // namespace gpupart::widgets
