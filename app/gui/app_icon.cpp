#include "app_icon.hpp"

namespace gpupart::gui {

// The PNGs rendered from gpupart-gui.svg (resources/icons/render-pngs.sh), not the SVG itself: drawing an
// SVG icon needs Qt's SVG icon plugin at run time, and the window manager asks for these sizes anyway.
QIcon app_icon() {
    QIcon icon;
    icon.addFile(QStringLiteral(":/icons/gpupart-gui-48.png"), QSize(48, 48));
    icon.addFile(QStringLiteral(":/icons/gpupart-gui-128.png"), QSize(128, 128));
    return icon;
}

}  // namespace gpupart::gui
