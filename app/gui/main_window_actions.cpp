// The main window's menus and toolbar (buildActions): every action, its key and where it shows.
// main_window.cpp builds the docks and refreshes the views.
#include "main_window.hpp"

#include <algorithm>

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDockWidget>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include "change_command.hpp"
#include "charts_panel.hpp"
#include "gpu_meters_chart.hpp"
#include "controller/profile_apply.hpp"
#include "copy_engine_painter.hpp"
#include "copy_engine_view.hpp"
#include "display_text.hpp"
#include "engines_view.hpp"
#include "findings_panel.hpp"
#include "profiles_panel.hpp"
#include "floorplan_painter.hpp"
#include "floorplan_view.hpp"
#include "model/gpu_queries.hpp"
#include "model/user_error.hpp"
#include "process_table_model.hpp"
#include "process_table_view.hpp"
#include "owner_colors.hpp"
#include "smlp_panel.hpp"
#include "snapshot/snapshot_file.hpp"
#include "window_fit.hpp"

namespace gpupart::gui {

void MainWindow::buildActions() {
    QMenu* file = menuBar()->addMenu("&File");
    QMenu* export_menu = file->addMenu("&Export");
    export_menu->addAction("Floorplan as &PNG…", this, [this] { exportWithDialog("png"); });
    export_menu->addAction("Floorplan as &SVG…", this, [this] { exportWithDialog("svg"); });
    export_menu->addAction("Copy-engine wiring as P&NG…", this, [this] { exportWithDialog("copy-png"); });
    export_menu->addAction("Copy-engine wiring as S&VG…", this, [this] { exportWithDialog("copy-svg"); });
    export_menu->addAction("Snapshot as &JSON…", this, [this] { exportWithDialog("json"); });
    file->addSeparator();
    QAction* quit = file->addAction("&Quit", this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu("&Edit");
    QAction* undo = undo_->createUndoAction(this, "&Undo");
    undo->setShortcut(QKeySequence::Undo);
    undo->setIcon(QIcon::fromTheme("edit-undo", style()->standardIcon(QStyle::SP_ArrowBack)));
    QAction* redo = undo_->createRedoAction(this, "&Redo");
    redo->setIcon(QIcon::fromTheme("edit-redo", style()->standardIcon(QStyle::SP_ArrowForward)));
    // Both keys people use, each once: QKeySequence::Redo is Ctrl+Shift+Z under X11, GNOME and KDE, and
    // naming it beside Ctrl+Shift+Z bound that key twice ("Ambiguous shortcut overload": it did nothing).
    redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    QAction* give = edit->addAction("&Give selection to…", this, [this] {
        showGiveMenu(floorplan_->mapToGlobal(floorplan_->rect().center()));
    });
    give->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    QAction* release = edit->addAction("&Release selection…");  // confirmed first (buildKeyboard)
    edit->addAction("Select &all TPCs", this, [this] { floorplan_->setSelection(real_tpcs(session_.gpu())); })
        ->setShortcut(QKeySequence::SelectAll);
    edit->addAction("&Clear selection", this, [this] { floorplan_->setSelection({}); });

    QMenu* view = menuBar()->addMenu("&View");
    QMenu* rate = view->addMenu("&Refresh rate");
    auto* rates = new QActionGroup(this);
    for (const double hz : {1.0, 2.0, 4.0, 10.0}) {
        QAction* action = rate->addAction(QString("%1 Hz").arg(hz), this, [this, hz] { setRefreshHz(hz); });
        action->setCheckable(true);
        action->setData(hz);
        rates->addAction(action);
    }
    QAction* pause = rate->addAction("&Paused", this, [this] { setRefreshHz(0); });
    pause->setCheckable(true);
    pause->setData(0.0);
    rates->addAction(pause);
    connect(rate, &QMenu::aboutToShow, this, [this, rates] {
        for (QAction* action : rates->actions()) action->setChecked(action->data().toDouble() == refresh_hz_);
    });
    QAction* refresh = view->addAction(QIcon::fromTheme("view-refresh", style()->standardIcon(QStyle::SP_BrowserReload)),
                                       "Refresh &now", &session_, &GuiSession::refresh);
    refresh->setShortcut(QKeySequence::Refresh);
    view->addSeparator();
    // The floorplan fits its pane by default; these leave and restore that (Ctrl+wheel zooms at the pointer).
    QAction* zoom_in = view->addAction(QIcon::fromTheme("zoom-in"), "Zoom &in", floorplan_, &widgets::FloorplanView::zoomIn);
    zoom_in->setShortcuts({QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal)});
    QAction* zoom_out = view->addAction(QIcon::fromTheme("zoom-out"), "Zoom &out", floorplan_, &widgets::FloorplanView::zoomOut);
    zoom_out->setShortcut(QKeySequence::ZoomOut);
    QAction* zoom_fit = view->addAction(QIcon::fromTheme("zoom-fit-best"), "&Fit floorplan to window", floorplan_,
                                        &widgets::FloorplanView::zoomToFit);
    zoom_fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());
    buildKeyboard(view, release);

    QMenu* help = menuBar()->addMenu("&Help");
    help->addAction("&About gpupart", this, &MainWindow::showAbout);
    help->addAction("About &Qt", qApp, &QApplication::aboutQt);

    QToolBar* toolbar = addToolBar("Main");
    toolbar->setObjectName("toolbar-main");
    toolbar->setToolButtonStyle(Qt::ToolButtonIconOnly);  // undo's text names the whole change: tooltip only
    toolbar->addWidget(new QLabel(" GPU ", this));
    gpu_selector_ = new QComboBox(this);
    for (const Gpu& gpu : session_.chosen().snapshot.gpus)
        gpu_selector_->addItem(QString("%1: %2").arg(gpu.index).arg(QString::fromStdString(gpu_display_name(gpu))));
    gpu_selector_->setCurrentIndex(session_.gpuIndex());
    gpu_selector_->setEnabled(gpu_selector_->count() > 1);
    gpu_selector_->setToolTip("GPU shown (multi-GPU hosts)");
    connect(gpu_selector_, &QComboBox::currentIndexChanged, this, [this](int index) {
        try {
            undo_->clear();  // the stack's changes belong to the GPU they were made on
            exits_ = {};     // the other GPU's processes did not exit
            session_.selectGpu(index);
            floorplan_->setGpu(session_.gpu(), session_.title());
            engines_->setGpu(session_.gpu());
            copy_engines_->setGpu(session_.gpu());
            charts_->clear();
            updateScalingContext();
            profiles_->setController(&session_.controller());
            setWindowTitle(session_.title() + " — gpupart");
        } catch (const UserError& error) {
            report(error.what(), true);
        }
    });
    toolbar->addWidget(gpu_selector_);
    toolbar->addSeparator();
    toolbar->addAction(undo);
    toolbar->addAction(redo);
    toolbar->addAction(refresh);
    // Not the style's right arrow: without an icon theme that is redo's picture too (a text button then).
    QAction* give_button = toolbar->addAction(QIcon::fromTheme("document-send"), "Give selection to…", this, [give] { give->trigger(); });
    give_button->setIconText("Give…");
    if (give_button->icon().isNull())
        qobject_cast<QToolButton*>(toolbar->widgetForAction(give_button))->setToolButtonStyle(Qt::ToolButtonTextOnly);
    for (const auto& [action, name] : std::initializer_list<std::pair<QAction*, const char*>>{
             {undo, "action-undo"}, {redo, "action-redo"}, {refresh, "action-refresh"}, {give_button, "action-give"}})
        action->setObjectName(name);
    give_button->setToolTip("Give the selected TPCs to a process (Ctrl+G, Enter in the floorplan), or drag them");
    toolbar->addSeparator();
    // Without an icon theme (offscreen, bare desktops) the zoom buttons show their text.
    for (QAction* action : {zoom_in, zoom_out, zoom_fit}) {
        toolbar->addAction(action);
        if (action->icon().isNull())
            qobject_cast<QToolButton*>(toolbar->widgetForAction(action))->setToolButtonStyle(Qt::ToolButtonTextOnly);
    }
    zoom_fit->setIconText("Fit");
}

}  // namespace gpupart::gui
