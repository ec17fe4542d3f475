#pragma once
// Sizes that depend on the screen, kept apart from the window so tests can give them any screen: where the
// window opens when no geometry was saved, and the drag verdict's line in a status bar of a given width.
#include <QRect>
#include <QString>

class QFontMetrics;

namespace gpupart::gui {

// The first start's geometry on a screen whose available area (without panels and docks) is `available`:
// 85% of it, at most 1600 x 1000 (past that the docks only get emptier), centred, never off the screen.
QRect initial_window_geometry(const QRect& available);

// A restored geometry kept on the screen: no larger than `available`, moved inside it (a window saved on a
// larger screen or a monitor that is gone would open partly or wholly off-screen).
QRect keep_on_screen(const QRect& window, const QRect& available);

// `text` within `width` pixels: whole when it fits, else cut after the last whole word that fits, with "…".
// Never cut inside a word (a word longer than the width alone is cut, with "…").
QString elide_at_word(const QString& text, const QFontMetrics& metrics, int width);

}  // namespace gpupart::gui

#include <QObject>

class QTableView;

namespace gpupart::gui {

// Gives one column of a table what the others leave of its width (never less than `minimum`), on every
// resize of the table: on a 4K screen the process table's Command column gets the spare pixels, not the
// last column. The other columns keep the widths they have (contents, or what the user dragged).
class SpareWidthColumn : public QObject {
public:
    SpareWidthColumn(QTableView* view, int column, int minimum);
    void fit();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QTableView* view_;
    int column_;
    int minimum_;
};

}  // namespace gpupart::gui
