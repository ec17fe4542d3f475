#pragma once
// The window icon: the same picture the package installs for the desktop (resources/icons), compiled in,
// so the window has it in a build tree too and with no icon theme.
#include <QIcon>

namespace gpupart::gui {

QIcon app_icon();

}  // namespace gpupart::gui
