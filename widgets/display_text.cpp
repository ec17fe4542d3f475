#include "display_text.hpp"

#include <string>

#include <QTextDocument>  // Qt::convertFromPlainText

#include "model/user_error.hpp"

namespace gpupart::widgets {

QString plain_text(std::string_view text) { return QString::fromStdString(one_line(text)); }

QString tooltip_text(const QString& text) {
    if (text.isEmpty()) return text;  // no tooltip at all, not an empty paragraph
    // convertFromPlainText escapes and wraps in <p>: Qt::mightBeRichText is then always true, so the
    // escaped "&lt;b&gt;" is shown as "<b>" and not as those eight characters.
    return Qt::convertFromPlainText(text, Qt::WhiteSpaceNormal);
}

}  // namespace gpupart::widgets
