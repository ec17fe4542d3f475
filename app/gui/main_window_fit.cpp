// The window on the screen it opens on: its first size, the saved one kept on a screen, the drag verdict
// cut to the status bar's width at a word, pictures kept legible in their docks.
#include <QGuiApplication>
#include <QScreen>
#include <QScrollArea>
#include <QStatusBar>

#include "display_text.hpp"
#include "main_window.hpp"
#include "window_fit.hpp"

namespace gpupart::gui {

void MainWindow::placeOnScreen(const QByteArray& saved) {
    if (!saved.isEmpty() && restoreGeometry(saved)) {
        // Qt does not always keep it on a screen (a window saved on a larger screen or a monitor that is gone).
        const QScreen* on = QGuiApplication::screenAt(geometry().center());
        if (on == nullptr) on = screen() != nullptr ? screen() : QGuiApplication::primaryScreen();
        if (on != nullptr && !on->availableGeometry().contains(geometry())) setGeometry(keep_on_screen(geometry(), on->availableGeometry()));
        return;
    }
    // The first start (nothing saved): sized to this screen.
    const QScreen* on = screen() != nullptr ? screen() : QGuiApplication::primaryScreen();
    if (on == nullptr) return;
    const QRect available = on->availableGeometry();
    QRect wanted = initial_window_geometry(available);
    resize(wanted.size());
    // The frame (title bar, borders) as the window manager will add it is not known before show: the
    // window is placed so that a frame of the usual size stays inside the screen as well.
    move(wanted.topLeft());
}

void MainWindow::showDropVerdict(const QString& text) {
    drop_verdict_ = text;
    if (text.isEmpty()) {
        statusBar()->clearMessage();
        statusBar()->setToolTip(QString());
        return;
    }
    const int room = statusBar()->width() - (status_label_->isVisible() ? status_label_->width() : 0) - 24;
    const QString shown = elide_at_word(text, statusBar()->fontMetrics(), room);
    statusBar()->showMessage(shown, 0);
    statusBar()->setToolTip(shown == text ? QString() : widgets::tooltip_text(text));
}

QWidget* MainWindow::legible_scroll(QWidget* picture) {
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(picture);
    scroll->setWidgetResizable(true);  // fills the dock, down to the picture's legible minimum size
    scroll->setFrameShape(QFrame::NoFrame);
    return scroll;
}

}  // namespace gpupart::gui
